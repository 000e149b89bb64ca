#!/bin/bash
# Compound-entry SpMV on the GPU machine (issue 6), run from a folder holding
# bin/ tests/ bench/ and this script (the layout gpu_suite.sh uses):
#   bash compound_gpu.sh [quick]     quick: benchmark only, small sizes
#   bash compound_gpu.sh both [TYPES] the CUDA compound tests, then the fast and
#                                    the full search at GPU scale, one process
#                                    per type (TYPES: c32,c64,...; default all)
# Steps: the compound test suite on every target (CUDA through NVRTC, the
# OpenCL platforms), a first and a second benchmark run (the second one must
# find every plan in the cache: "cached" in the tune column), optionally the
# full search (FULL=1; slow with NVRTC: one compile per layout x n_t x n_b).
# Results under $OUT (default ./out-compound): compound.md / compound.csv.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out-compound}
mkdir -p "$OUT"
MODE=${1:-full}
LOG=$OUT/compound.log
: >"$LOG"
say() { echo "== $*" | tee -a "$LOG"; }
CACHE=${CACHE:-$OUT/cache}
export HISP_OPTIONS="cache_dir=$CACHE" # kernel and plan caches of every hisp context
if ldd bench/bench_compound_cuda | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
fi
{ date -u; nvidia-smi -L; ls -l /usr/local/cuda/lib64/libnvrtc.so* 2>&1; } >>"$LOG" 2>&1
SCALE=gpu
[ "$MODE" = quick ] && SCALE=small
if [ "$MODE" = both ]; then
    [ -n "${NO_TESTS:-}" ] || { say "compound tests on CUDA (the full search included)"; ( time HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=compound timeout 400 tests/check_hisp ) 2>&1 |
        grep -v '^error: ' | tee -a "$LOG" | tail -n 8; }
    for t in $(echo "${2:-c32,c64,b3x3_f32,b3x3_f64,q32,q64}" | tr , ' '); do
        say "fast and full search, $t"
        rm -rf "$CACHE" # fresh kernel caches: the tuning times include the builds
        timeout ${BENCH_TIMEOUT:-400} bench/bench_compound_cuda --scale gpu --types $t --search both \
            --repeat 20 --warmup 5 --md "$OUT/both-$t.md" --csv "$OUT/both-$t.csv" \
            --all-csv "$OUT/all-$t.csv" 2>>"$LOG"
        echo "exit $?" | tee -a "$LOG"
        tail -n +5 "$OUT/both-$t.md"
    done
    rm -rf "$CACHE" # thousands of cubins: not worth bringing back
    exit 0
fi
if [ "$MODE" != quick ]; then
    say "compound tests on every target (CUDA variants compile through NVRTC)"
    CK_RUN_SUITE=compound timeout 1200 tests/check_hisp 2>&1 | grep -v '^error: ' | tee -a "$LOG" | tail -n 6
fi
say "benchmark, first run (tunes, fills the plan cache under $CACHE)"
timeout ${BENCH_TIMEOUT:-1500} bench/bench_compound_cuda --scale $SCALE --opencl --repeat 50 --warmup 5 \
    --md "$OUT/compound.md" --csv "$OUT/compound.csv" 2>>"$LOG"
echo "exit $?" >>"$LOG"
say "benchmark, second run (every plan from the cache)"
timeout ${BENCH_TIMEOUT:-1500} bench/bench_compound_cuda --scale $SCALE --opencl --repeat 50 --warmup 5 \
    --md "$OUT/compound-cached.md" --csv "$OUT/compound-cached.csv" 2>>"$LOG"
echo "exit $?" >>"$LOG"
if [ "${FULL:-0}" = 1 ]; then
    say "full search (small sizes), for fast-vs-full quality and time"
    HISP_OPTIONS=cache_dir=off timeout ${FULL_TIMEOUT:-3000} bench/bench_compound_cuda --scale small --search full \
        --repeat 20 --md "$OUT/compound-full.md" --csv "$OUT/compound-full.csv" 2>>"$LOG"
    HISP_OPTIONS=cache_dir=off timeout 1500 bench/bench_compound_cuda --scale small --search fast \
        --repeat 20 --md "$OUT/compound-fast-small.md" --csv "$OUT/compound-fast-small.csv" 2>>"$LOG"
fi
cat "$OUT/compound.md"
