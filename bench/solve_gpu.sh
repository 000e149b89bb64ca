#!/bin/bash
# hisp's Krylov solvers on the GPU machine as a user waits for them:
# bench_solve_cuda (CG against the cuSPARSE + cuBLAS loop of NVIDIA's CG
# sample and the bytes floor, LSQR on CSR and HiSparse against a cuSPARSE +
# cuBLAS LSQR, BiCGSTAB / GMRES on helmholtz c64, CG on qsurface q64), then
# CuPy's cg and lsmr on the same systems (solve_cupy.py). Builds nothing:
# run it from the folder that `bash bench/stage_gpu.sh solve` stages
# (.gpu/), or from the repository with build/ built (cuda=yes).
#
#   bash solve_gpu.sh [tests] [hisp] [cupy]      (default: hisp cupy)
#
# Settings: OUT (./out), REPEAT (3), SIZES (160,200), ITERS (500), LSQR_ITERS
# (200), KRYLOV_ITERS (200), PARTS of bench_solve_cuda (cg,lsqr,compound; krylov:
# CG, BiCGSTAB, GMRES per iteration on poisson3d), GMRES_ITERS for CuPy's gmres
# (0: none), LSQR_ROWS for CuPy's lsmr (0: none), SUITES for `tests` (solver
# vector). About 2
# minutes on an H100. Writes $OUT/solve.tgz holding solve.log (everything),
# solve.md, solve.json, cupy.txt, cupy.json (and tests.log), and beside it
# solve.md and cupy.txt.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# results are written in a work folder and packed into $OUT/solve.tgz at the
# end (the device tool brings back at most 8 files), the tables beside it
FINAL=${OUT:-$PWD/out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
pack() {
    tar czf "$FINAL/solve.tgz" -C "$OUT" . 2>/dev/null
    for f in solve.md cupy.txt tests.log; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
}
trap pack EXIT
LOG=$OUT/solve.log
bin() { for d in "$HERE/$1" "$HERE/../build/$1"; do [ -x "$d" ] && { echo "$d"; return; }; done; echo "missing-$1"; }
B=$(bin bench/bench_solve_cuda)
# cuSPARSE / cuBLAS from the Python wheels where the system has none
if ldd "$B" 2>/dev/null | grep -q "not found"; then
    d=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
dirs = set()
for r in roots:
    for pat in ("libcusparse.so*", "libcublas.so*", "libcublasLt.so*", "libnvJitLink.so*"):
        dirs.update(os.path.dirname(f) for f in glob.glob(os.path.join(r, "**", pat), recursive=True))
print(":".join(sorted(dirs)))
PY
)
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
    ldd "$B" | grep "not found" >>"$LOG"
fi
export PYTHONUNBUFFERED=1
steps=${*:-hisp cupy}
{ date -u; nvidia-smi -L; } >>"$LOG" 2>&1
status=0
for step in $steps; do
    echo "== $step" | tee -a "$LOG"
    case $step in
    tests)
        T=$(bin tests/check_hisp)
        for s in ${SUITES:-solver vector}; do
            HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s timeout 600 "$T" >>"$OUT/tests.log" 2>&1
            rc=$?
            echo "suite $s (cuda): exit $rc; $(tail -n 1 "$OUT/tests.log")" | tee -a "$LOG"
            [ $rc = 0 ] || status=1
        done
        ;;
    hisp)
        timeout 420 "$B" --parts "${PARTS:-cg,lsqr,compound}" --sizes "${SIZES:-160,200}" \
            --iters "${ITERS:-500}" --repeat "${REPEAT:-3}" \
            --lsqr-iters "${LSQR_ITERS:-200}" --krylov-iters "${KRYLOV_ITERS:-200}" \
            --json "$OUT/solve.json" --summary "$OUT/solve.md" >>"$LOG" 2>&1
        rc=$?
        echo "bench_solve_cuda: exit $rc" | tee -a "$LOG"
        [ $rc = 0 ] || status=1
        [ -f "$OUT/solve.md" ] && cat "$OUT/solve.md"
        ;;
    cupy)
        hj=()
        [ -f "$OUT/solve.json" ] && hj=(--hisp-json "$OUT/solve.json")
        timeout 300 python3 "$HERE/solve_cupy.py" --sizes "${SIZES:-160,200}" --iters "${ITERS:-500}" \
            --lsqr-iters "${LSQR_ITERS:-200}" --lsqr-rows "${LSQR_ROWS:-4000000}" \
            --gmres-iters "${GMRES_ITERS:-0}" --repeat "${REPEAT:-3}" --json "$OUT/cupy.json" \
            "${hj[@]}" >"$OUT/cupy.txt" 2>&1
        rc=$?
        echo "solve_cupy: exit $rc" | tee -a "$LOG"
        cat "$OUT/cupy.txt" >>"$LOG"
        [ $rc = 0 ] || status=1
        tail -n 8 "$OUT/cupy.txt"
        ;;
    *)
        echo "unknown step $step (tests, hisp, cupy)" | tee -a "$LOG"
        status=1
        ;;
    esac
done
exit $status
