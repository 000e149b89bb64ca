#!/bin/bash
# Profiles the HiSparse addition's node kernels with ncu on the GPU machine
# (from the folder holding bench/): one A + B per matrix (B = A perturbed,
# sigma 10), every hs_add_* launch with its time, DRAM traffic and grid.
# Writes $OUT/prof_add_<matrix>.csv and prints a per-kernel table.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=bench/bench_add_cuda
[ -x "$B" ] || B=../build/bench/bench_add_cuda
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__inst_issued.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,lts__t_sector_hit_rate.pct
for m in ${PROF_MATRICES:-rmat banded dense poisson3d}; do
  echo "== $m f64"
  timeout 250 ncu --clock-control none --metrics $M --csv -k regex:'hs_add' --launch-count ${LAUNCHES:-12} \
    $B --matrices $m --precision f64 --repeat 1 --warmup 0 >"$OUT/prof_add_$m.csv" 2>&1
  python3 - "$OUT/prof_add_$m.csv" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.DictReader(rows))
k = {}
order = []
for x in r:
    key = (x["ID"], x["Kernel Name"][:24])
    if key not in k: order.append(key)
    u = x.get("Metric Unit", "")
    val = float(x["Metric Value"].replace(",", "") or 0)
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3, "second": 1e6, "byte": 1e-6,
             "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3}.get(u, 1)
    k.setdefault(key, {})[x["Metric Name"]] = val * scale
print("%-4s %-24s %10s %10s %10s %6s %8s %6s %6s %9s %9s %6s %9s %4s %6s %6s %5s" % ("id", "kernel", "us", "MB read", "MB write", "dram%", "grid", "warps%", "lsb", "L2 rd MB", "L2 wr MB", "issue%", "shm confl", "regs", "bar", "ssb", "L2hit"))
for key in order:
    v = k[key]
    f = lambda n: v.get(n, 0)
    print("%-4s %-24s %10.1f %10.1f %10.1f %6.1f %8d %6.1f %6.1f %9.1f %9.1f %6.1f %9d %4d %6.1f %6.1f %5.1f" % (key[0], key[1], f("gpu__time_duration.sum"),
          f("dram__bytes_read.sum"), f("dram__bytes_write.sum"),
          f("dram__throughput.avg.pct_of_peak_sustained_elapsed"), f("launch__grid_size"),
          f("sm__warps_active.avg.pct_of_peak_sustained_active"),
          f("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"),
          f("lts__t_sectors_srcunit_tex_op_read.sum") * 32e-6, f("lts__t_sectors_srcunit_tex_op_write.sum") * 32e-6,
          f("sm__inst_issued.avg.pct_of_peak_sustained_active"), f("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
          f("launch__registers_per_thread"), f("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"),
          f("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"), f("lts__t_sector_hit_rate.pct")))
PY
done
