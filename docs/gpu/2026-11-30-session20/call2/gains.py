import sys, math
rows={}
def fl(x):
    try: return float(x)
    except: return float('nan')
for line in open(sys.argv[1]):
    f=line.split(); name=f[0][2:]; vals=[fl(x) for x in f[1:]]
    set_,var,r=name.split('_'); rows[(set_,var,r)]=vals
names=[l.strip() for l in open(sys.argv[2] if len(sys.argv) > 2 else 'names.txt')]
for set_ in sorted({k[0] for k in rows}):
    d1=rows[(set_,'def','r1')]; d2=rows[(set_,'def','r2')]
    n=len(d1)
    nm = names if n==23 else names[1:]
    print('==',set_)
    for i in range(n):
        base=(d1[i]+d2[i])/2; lo=min(d1[i],d2[i])
        best=[]
        for (s,v,r),vals in rows.items():
            if s!=set_ or v=='def' or r!='r1': continue
            v2=rows[(s,v,'r2')]
            if len(vals)!=n: continue
            a,b=vals[i],v2[i]
            if a<0.95*lo and b<0.95*lo:
                best.append((round(base/((a+b)/2),3),v))
        best.sort(reverse=True)
        print(f"{nm[i]:34s} def {base:.4f}  ", best[:5])
