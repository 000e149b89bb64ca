#!/bin/bash
# Profiles the CUDA replay's leaf kernels with ncu on the GPU machine (from
# the folder holding bin/): per-kernel times of every replay launch for the
# suite's matrices (which queue costs what), and the full ncu sections of
# the heavy-queue kernel for PROF_FULL matrices. Writes $OUT/replay_*.
#   PROF_MATRICES (default "poisson3d banded rmat circuit"), PROF_PREC
#   (default "f64 f32"), PROF_FULL (default "banded:f32 poisson3d:f32"),
#   PROF_KERNEL (the full sections' kernel regex, default hs_leaf_replay),
#   PROF_OPS (default "N T").
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
T=$(mktemp -d)
gen() {
    case $1 in
    poisson3d) bin/hisp gen poisson3d --n 160 -o $T/$1.mtx ;;
    banded) bin/hisp gen banded --n 2000000 --bandwidth 16 --nnz-per-row 16 -o $T/$1.mtx ;;
    rmat) bin/hisp gen rmat --scale 22 --edge-factor 8 -o $T/$1.mtx ;;
    circuit) bin/hisp gen circuit --n 2000000 --nnz-per-row 8 --dense-share 0.3 -o $T/$1.mtx ;;
    esac >/dev/null
}
for m in ${PROF_MATRICES:-poisson3d banded rmat circuit}; do
    gen $m
    for p in ${PROF_PREC:-f64 f32}; do
        for op in ${PROF_OPS:-N T}; do
            tr=""
            [ $op = T ] && tr=--transpose
            f=$OUT/replay_${m}_${p}_$op.csv
            # the last call's kernels are the second replay's (the first builds the plan)
            timeout 300 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
                -k regex:'hs_leaf' bin/hisp spmv $T/$m.mtx --format hisparse --backend cuda \
                --precision $p --repeat 3 $tr >"$f" 2>&1
            python3 - "$f" "$m $p $op" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = [x for x in csv.DictReader(rows) if x["Metric Name"] == "gpu__time_duration.sum"]
# the launches of the last call: from the end back to the first repeat of a name
last = []
for x in reversed(r):
    n = x["Kernel Name"].split("(")[0].split("::")[-1] + x["Grid Size"]
    if any(n == y[0] for y in last): break
    t = float(x["Metric Value"].replace(",", ""))
    last.append((n, t / 1000 if x["Metric Unit"] == "ns" else t))
print(sys.argv[2], " | ".join("%s %.1f us" % (n, t) for n, t in reversed(last)))
PY
        done
    done
done
for mp in ${PROF_FULL:-banded:f32 poisson3d:f32}; do
    m=${mp%:*}
    p=${mp#*:}
    [ -f $T/$m.mtx ] || gen $m
    timeout 300 ncu --clock-control none --set full --import-source yes -k regex:"${PROF_KERNEL:-hs_leaf_replay}" \
        --launch-skip ${PROF_SKIP:-2} --launch-count ${PROF_COUNT:-2} -o $OUT/replay_full_${m}_$p bin/hisp spmv $T/$m.mtx \
        --format hisparse --backend cuda --precision $p --repeat 3 >/dev/null 2>&1
    ncu --import $OUT/replay_full_${m}_$p.ncu-rep --page details --csv >$OUT/replay_full_${m}_$p.csv 2>&1
    # PROF_SOURCE=1: per-line counters and stalls (CUDA source with SASS)
    [ "${PROF_SOURCE:-0}" = 1 ] && ncu --import $OUT/replay_full_${m}_$p.ncu-rep --page source --csv \
        --print-source cuda,sass >$OUT/replay_src_${m}_$p.csv 2>&1
    grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|Compute \(SM\)|Issue Slots Busy|L1/TEX Hit|L2 Hit|Stall|Warp Cycles Per Issued" \
        $OUT/replay_full_${m}_$p.csv | head -60
done
