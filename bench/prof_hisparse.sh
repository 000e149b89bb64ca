#!/bin/bash
# Profiles HiSparse SpMV leaf kernels with ncu on the GPU machine (from the
# folder holding bin/): the replayed calls (every call after a matrix's
# first) launch them from the host, so ncu sees each one (the scheduled
# first call's node kernels are launched by the device controller and are
# not profiled). Writes $OUT/prof_*.csv. PROF_SKIP skips launches,
# PROF_PREC (default f64), PROF_TR (default "N T") and PROF_MATRICES select.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
T=$(mktemp -d)
bin/hisp gen poisson3d --n 160 -o $T/p3.mtx >/dev/null
bin/hisp gen circuit --n 2000000 --nnz-per-row 8 --dense-share 0.3 -o $T/circuit.mtx >/dev/null
M=smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active
for m in ${PROF_MATRICES:-p3 circuit}; do
  for op in ${PROF_TR:-N T}; do
    tr=""
    [ "$op" = T ] && tr=--transpose
    for p in ${PROF_PREC:-f64}; do
      echo "== $m $p $tr"
      bin/hisp spmv $T/$m.mtx --format hisparse --backend cuda --precision $p --repeat 20 $tr | tail -n 4
      echo "== $m $p $tr ncu"
      timeout 200 ncu --clock-control none --metrics $M --csv \
        -k regex:'hs_leaf' --launch-skip ${PROF_SKIP:-4} --launch-count 12 \
        bin/hisp spmv $T/$m.mtx --format hisparse --backend cuda --precision $p --repeat 3 $tr \
        >"$OUT/prof_${m}_${p}${tr}.csv" 2>&1
      python3 - "$OUT/prof_${m}_${p}${tr}.csv" <<'PY'
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.DictReader(rows))
k = collections.OrderedDict()
for x in r:
    key = (x["ID"], x["Kernel Name"][:40])
    k.setdefault(key, {})[x["Metric Name"]] = x["Metric Value"]
for (i, n), v in k.items():
    print(i, n, " ".join("%s=%s" % (m.split("__")[1][:30] + m[-12:], v[m]) for m in v))
PY
    done
  done
  echo "== $m CSR"
  bin/hisp spmv $T/$m.mtx --backend cuda --repeat 20 | tail -n 3
done
