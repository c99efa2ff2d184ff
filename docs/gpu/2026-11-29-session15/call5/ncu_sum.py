import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; iK = hdr.index('Kernel Name'); iM = hdr.index('Metric Name'); iV = hdr.index('Metric Value'); iI = hdr.index('ID')
cur = {}
for r in rows[1:]:
    cur.setdefault(r[iI], {'k': r[iK][:70]})[r[iM]] = r[iV]
short = {'gpu__time_duration.sum':'us','launch__grid_size':'grid','launch__block_size':'blk','launch__cluster_dim_z':'clz','launch__shared_mem_per_block_dynamic':'smem','launch__registers_per_thread':'regs','dram__bytes_read.sum':'dramR','dram__bytes_write.sum':'dramW','lts__t_bytes.sum':'L2','sm__throughput.avg.pct_of_peak_sustained_elapsed':'sm%','sm__warps_active.avg.pct_of_peak_sustained_active':'occ%'}
for i, d in cur.items():
    if 'delay' in d['k'] or 'spin' in d['k'] or 'naive' in d['k'].lower() or 'reference' in d['k'].lower(): continue
    print(i, d['k'], ' '.join(f"{short.get(m,m)}={v}" for m, v in d.items() if m != 'k'))
