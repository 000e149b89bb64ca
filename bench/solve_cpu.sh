#!/bin/bash
# hisp's CG on this machine's OpenCL device (PoCL) against scipy's cg, on the
# same poisson3d matrices and right sides, fixed iterations, wall per
# iteration: `hisp bench gen:poisson3d:N --op solve --method cg --backends
# opencl` (and `--op spmv` for the SpMV's share), then bench/solve_scipy.py.
# Build first (./hisp.sh build); scipy: `python3 -m pip install --user scipy`.
#
#   bash bench/solve_cpu.sh     (SIZES=64,80,100 ITERS=100 REPEAT=3 ROUNDS=3)
#
# hisp bench's right side b_i is splitmix64(7, i) in [-1, 1), solve_inputs.py's
# uniform(7, n), so both solve the same systems. Its reference row (the
# oracle that checks the OpenCL row's x) runs too and is left out of the
# summary. The machine is shared: hisp and scipy run alternately, ROUNDS
# times, and the summary takes the median over the rounds. Writes
# bench/results/solve-cpu-<UTC date>/: env.txt (machine, load, thread
# settings), check.txt (solve_inputs.py's poisson3d equals `hisp gen`'s),
# hisp-solve-R-N.json and hisp-spmv-R-N.json (hisp bench --json) and
# scipy-R.json per round R, hisp.txt, scipy.txt, summary.md.
set -eu
cd "$(dirname "$0")/.."
SIZES=${SIZES:-64,80,100}
ITERS=${ITERS:-100}
REPEAT=${REPEAT:-3}
ROUNDS=${ROUNDS:-3}
D=bench/results/solve-cpu-$(date -u +%F)
mkdir -p "$D"
# pinned threads: on the 2-core VM unpinned PoCL threads often share a core
export POCL_AFFINITY=${POCL_AFFINITY:-1}
{
    date -u
    uname -srm
    echo "cores: $(nproc); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    grep -m1 "model name" /proc/cpuinfo
    echo "POCL_AFFINITY=$POCL_AFFINITY OMP_NUM_THREADS=${OMP_NUM_THREADS:-} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-}"
    echo "sizes $SIZES, $ITERS iterations, median of $REPEAT solves, $ROUNDS rounds"
} >"$D/env.txt"
build/bin/hisp gen poisson3d --n 7 -o "$D/p7.mtx" >/dev/null
python3 bench/solve_scipy.py --check-mtx "$D/p7.mtx" --check-n 7 | tee "$D/check.txt"
rm -f "$D/p7.mtx"
rm -f "$D"/hisp*.json "$D"/scipy*.json "$D"/hisp.txt "$D"/scipy.txt
for r in $(seq 1 "$ROUNDS"); do
    for n in ${SIZES//,/ }; do
        build/bin/hisp bench "gen:poisson3d:$n" --op solve --method cg --backends opencl \
            --iterations "$ITERS" --repeat "$REPEAT" --json >"$D/hisp-solve-$r-$n.json"
        build/bin/hisp bench "gen:poisson3d:$n" --op spmv --backends opencl --repeat 10 \
            --json >"$D/hisp-spmv-$r-$n.json"
        python3 bench/solve_scipy.py --hisp "$D/hisp-solve-$r-$n.json" \
            "$D/hisp-spmv-$r-$n.json" | tee -a "$D/hisp.txt"
    done
    python3 bench/solve_scipy.py --sizes "$SIZES" --iters "$ITERS" --repeat "$REPEAT" \
        --json "$D/scipy-$r.json" | tee -a "$D/scipy.txt"
done
python3 bench/solve_scipy.py --merge "$D" | tee "$D/summary.md"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$D/env.txt"
echo "results in $D"
