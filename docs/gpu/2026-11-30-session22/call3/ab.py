import re,math,collections,sys
d=sys.argv[1]; rounds=int(sys.argv[2])
def read(f):
    rows=[];name=None
    for l in open(f):
        m=re.match(r'^(\S.*?)\s+\d+\.\d GFLOP',l)
        if m: name=m.group(1)[:34]
        m=re.match(r'^\s+gpu:\S+\s+([\d.]+) ms',l)
        if m and name: rows.append((name,float(m.group(1))))
    return rows
t=collections.defaultdict(lambda: collections.defaultdict(list)); names=[]
for v in ["new","old"]:
    for r in range(1,rounds+1):
        for n,ms in read(f"ab_{d}_{v}_r{r}.log"):
            if n not in names: names.append(n)
            t[n][v].append(ms)
g=[]
for n in names:
    a=min(t[n]["new"]); b=min(t[n]["old"]); g.append(b/a)
    print(f"{n:36s} new {a:.4f} old {b:.4f}  gain {b/a:.3f}   {t[n]['new']} {t[n]['old']}")
print("geomean gain", math.exp(sum(map(math.log,g))/len(g)))
