#!/bin/bash
# The device-resident runtime on the GPU machine, as a user waits for it:
# the CUDA tests of the runtime's suites, the vector algebra against CuPy,
# SpMV with no settings against cuSPARSE, and the addition against csrgeam2
# with C's allocation. Builds nothing: run it from the folder that
# `bash bench/stage_gpu.sh runtime` stages (.gpu/), or from the repository
# with build/ built (cuda=yes).
#
#   bash runtime_gpu.sh [tests] [vector] [spmv] [add]     (default: all four)
#
# Settings: OUT (./out), REPEAT (30), MATRICES (the GPU suite), PREC (both).
# Writes $OUT/runtime.tgz holding runtime.log (everything), tests.log,
# vector_*.txt, spmv.csv + spmv.md and add_gpu.sh's files, and beside it
# spmv.md, summary_add.md and tests.log.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# results are written in a work folder and packed into $OUT/runtime.tgz at
# the end (the device tool brings back at most 8 files), with the summaries
# beside it
FINAL=${OUT:-$PWD/out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
pack() {
    tar czf "$FINAL/runtime.tgz" -C "$OUT" . 2>/dev/null
    for f in spmv.md summary_add.md tests.log; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
}
trap pack EXIT
LOG=$OUT/runtime.log
bin() { for d in "$HERE/$1" "$HERE/../build/$1"; do [ -x "$d" ] && { echo "$d"; return; }; done; echo "missing-$1"; }
if ldd "$(bin bench/bench_runtime_cuda)" 2>/dev/null | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
fi
steps=${*:-tests vector spmv add}
{ date -u; nvidia-smi -L; } >>"$LOG" 2>&1
status=0
for step in $steps; do
    echo "== $step" | tee -a "$LOG"
    case $step in
    tests)
        T=$(bin tests/check_hisp)
        for s in ${SUITES:-vector transfer interop spmv hisparse_dev hisparse_add hisparse_resid cli}; do
            HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s timeout 900 "$T" >>"$OUT/tests.log" 2>&1
            rc=$?
            echo "suite $s (cuda): exit $rc; $(tail -n 1 "$OUT/tests.log")" | tee -a "$LOG"
            [ $rc = 0 ] || status=1
        done
        if command -v compute-sanitizer >/dev/null; then
            for s in ${SANITIZE_SUITES:-vector hisparse_resid interop}; do
                for tool in memcheck racecheck; do
                    HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s timeout 600 \
                        compute-sanitizer --tool $tool "$T" >"$OUT/${tool}_$s.log" 2>&1
                    echo "$tool $s: exit $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/${tool}_$s.log" | tail -1)" | tee -a "$LOG"
                done
            done
        fi
        ;;
    vector)
        V=$(bin bench/bench_vector)
        for t in f64 f32 c64; do
            timeout 600 "$V" --backend cuda --n 33554432 --type $t --repeat "${REPEAT:-30}" \
                >"$OUT/vector_hisp_$t.txt" 2>&1
            echo "bench_vector $t: exit $?" | tee -a "$LOG"
            cat "$OUT/vector_hisp_$t.txt" >>"$LOG"
            timeout 600 python3 "$HERE/vector_cupy.py" --n 33554432 --type $t \
                --repeat "${REPEAT:-30}" >"$OUT/vector_cupy_$t.txt" 2>&1
            echo "vector_cupy $t: exit $?" | tee -a "$LOG"
            cat "$OUT/vector_cupy_$t.txt" >>"$LOG"
        done
        ;;
    spmv)
        mats=$(echo "${MATRICES:-poisson3d banded rmat dense circuit blockdiag}" | tr ' ' ,)
        timeout 1200 "$(bin bench/bench_runtime_cuda)" --matrices "$mats" --precision "${PREC:-both}" \
            --repeat "${REPEAT:-30}" --csv "$OUT/spmv.csv" --summary "$OUT/spmv.md" >>"$LOG" 2>&1
        rc=$?
        echo "bench_runtime_cuda: exit $rc" | tee -a "$LOG"
        [ $rc = 0 ] || status=1
        [ -f "$OUT/spmv.md" ] && cat "$OUT/spmv.md"
        ;;
    add)
        BENCH_ADD=$(bin bench/bench_add_cuda) OUT=$OUT REPEAT=${REPEAT:-10} WARMUP=2 \
            bash "$HERE/add_gpu.sh" >>"$LOG" 2>&1
        rc=$?
        echo "add_gpu.sh: exit $rc" | tee -a "$LOG"
        [ $rc = 0 ] || status=1
        grep -E "wall-clock geometric|geometric means" "$OUT/summary_add.md" 2>/dev/null
        ;;
    esac
done
exit $status
