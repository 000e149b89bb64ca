#!/bin/bash
# Multi-GPU scaling of the distributed Krylov solvers (issue 26) on a machine
# with 4 NVIDIA GPUs: bench_solve_cuda --parts dist (CG and BiCGSTAB on 1 GPU,
# a plan over GPU 0 alone, and pcsr plans over 2 and 4 GPUs: ms per
# iteration, speedup, the breakdown product / vector / reduce / other per
# iteration, x's difference to the 1-GPU solution), the CUDA test suites,
# and the SpMV scaling of bench/msrep_suite.sh. In pieces, one command each,
# every piece well under the device tool's 10-minute command limit. Builds
# nothing: run it from the folder `bash bench/stage_gpu.sh scale` stages
# (.gpu/), or from the repository with build/ built (cuda=yes).
#
#   bash scale_gpu.sh tests            CUDA suites solver_dist solver msrep vector spmv_dot
#   bash scale_gpu.sh solve-poisson    poisson3d of side SIDE
#   bash scale_gpu.sh solve-rmat       the SPD graph of rmat RMAT_SCALE / RMAT_EF
#   bash scale_gpu.sh spmv             msrep_suite.sh piece 3 (poisson3d 1e9, every kind)
#   bash scale_gpu.sh spmv-rmat        msrep_suite.sh piece 2 (rmat 1e9)
#   bash scale_gpu.sh list             the pieces with their sizes and estimates
#   DRY=1 bash scale_gpu.sh PIECE..    print the commands, run nothing
#
# Settings (environment): OUT (./out), ITERS (100), REPEAT (3), DEVICES
# (1,1p,2,4,8, capped at the GPUs nvidia-smi lists; 1 = one context on GPU 0,
# the baseline; 1p = a plan over GPU 0 alone), METHODS (cg,bicgstab), SIDE
# (760 where a GPU has < 120 GB, else 900: the CSR fills half of one GPU's
# memory), RMAT_SCALE (26), RMAT_EF (16), SUITES (for tests), MSREP_PIECES
# (msrep_suite.sh pieces for spmv / spmv-rmat: 3 / 2; 5 = poisson3d 4e9). Each piece
# writes $OUT/scale-PIECE.tgz (the log, the markdown tables, the JSON) and
# $OUT/scale-PIECE.md beside it (the device tool returns at most 8 files).
#
# Estimates, from this code's steps and the 2 x H200 run of 2026-11-26
# (poisson3d 560: generation 1.4 s, a 2-GPU plan 6.9 s, CG 8.9 ms/it on one
# H200), NOT measured on 4 GPUs yet; 4 x H100 (H200: about 0.7x):
#   tests          ~2-3 min (the CUDA suites; solver_dist runs plans of 2-3 parts)
#   solve-poisson  SIDE 760: 439M rows, 3.07G entries, CSR 40.4 GB (+ BiCGSTAB's 8
#                  vectors of 3.5 GB on the 1-GPU run: ~69 GB on GPU 0); generation
#                  ~4 s, plans 1p/2/4 ~20 s each (partition + upload), one-context
#                  upload ~10 s; solves 4 x 100 iterations per (method, devices):
#                  CG ~30 ms/it and BiCGSTAB ~60 ms/it on one H100 -> ~36 s on 1 GPU,
#                  ~36 s on 1p, ~18 s on 2, ~9 s on 4; x differences on the host
#                  ~5 s: about 3-3.5 min. SIDE 900 (H200 x 4): 729M rows, 5.1G
#                  entries, 67 GB: about 4-5 min.
#   solve-rmat     RMAT_SCALE 26, RMAT_EF 16: 1.07G edges -> SPD graph ~2.07G
#                  entries (1.93 per edge at scale 20-22 here), 67M rows, 25 GB;
#                  generation ~40-60 s (the bucketing pass is serial), SPD graph
#                  ~10 s (OpenMP), the copy into hisp ~40 s (serial), plans ~15 s
#                  each, solves ~60-90 s (power-law rows: slower per entry than the
#                  stencil): about 4-5 min. RMAT_SCALE=27 (4.1G entries, 50 GB) would
#                  take ~8-9 min: too close to the limit; run it with DEVICES=1,4.
#   spmv           ~2.5 min (msrep_suite.sh's own estimate for piece 3)
#   spmv-rmat      ~3 min (piece 2)
# Host memory: poisson3d 760 ~40 GB for A, the plan's parts as much again, 8
# solutions of 3.5 GB; rmat 26/16 ~60 GB at the peak (the edge list, A and
# B's buffer).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FINAL=${OUT:-$PWD/out}
DRY=${DRY:-0}
ITERS=${ITERS:-100}
REPEAT=${REPEAT:-3}
METHODS=${METHODS:-cg,bicgstab}
RMAT_SCALE=${RMAT_SCALE:-26}
RMAT_EF=${RMAT_EF:-16}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
gmem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
gmem=${gmem:-0}
if [ -z "${SIDE:-}" ]; then
    SIDE=760
    [ "$gmem" -ge 120000 ] && SIDE=900
fi
if [ -z "${DEVICES:-}" ]; then
    DEVICES=1,1p
    [ "$ngpu" -ge 2 ] && DEVICES=$DEVICES,2
    [ "$ngpu" -ge 4 ] && DEVICES=$DEVICES,4
    [ "$ngpu" -ge 8 ] && DEVICES=$DEVICES,8
    [ "$DRY" = 1 ] && [ "$ngpu" -lt 4 ] && DEVICES=1,1p,2,4
fi
bin() { for d in "$HERE/$1" "$HERE/../build/$1"; do [ -x "$d" ] && { echo "$d"; return; }; done; echo "missing-$1"; }
B=$(bin bench/bench_solve_cuda)

# cuSPARSE / cuBLAS from the Python wheels where the system has none (as solve_gpu.sh)
libs() {
    ldd "$1" 2>/dev/null | grep -q "not found" || return 0
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
}

# run CMD...: echo it; run it unless DRY (status 0 in DRY)
run() {
    echo "+ $*"
    [ "$DRY" = 1 ] && return 0
    "$@"
}

dist() { # matrices-flag...: the distributed solvers' scaling
    local piece=$1
    shift
    run timeout 590 "$B" --parts dist "$@" --dist-devices "$DEVICES" --dist-methods "$METHODS" \
        --iters "$ITERS" --repeat "$REPEAT" --json "$W/$piece.json" --summary "$W/$piece.md"
}

piece() {
    local p=$1 rc=0
    W=$(mktemp -d)
    local LOG=$W/$p.log
    echo "== $p: $(date -u +%T) UTC, $ngpu GPU(s) of $gmem MiB, DEVICES=$DEVICES" | tee "$LOG"
    [ "$DRY" = 1 ] || { nvidia-smi -L; } >>"$LOG" 2>&1
    local t0=$SECONDS
    case $p in
    tests)
        local T
        T=$(bin tests/check_hisp)
        for s in ${SUITES:-solver_dist solver msrep vector spmv_dot}; do
            if [ "$DRY" = 1 ]; then
                echo "+ HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s timeout 300 $T"
                continue
            fi
            HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s timeout 300 "$T" >>"$W/tests.log" 2>&1
            local r=$?
            echo "suite $s (cuda): exit $r; $(tail -n 1 "$W/tests.log")" | tee -a "$LOG" "$W/$p.md"
            [ $r = 0 ] || rc=1
        done
        ;;
    solve-poisson)
        libs "$B"
        dist "$p" --dist-matrices poisson3d --dist-side "$SIDE" 2>&1 | tee -a "$LOG"
        rc=${PIPESTATUS[0]}
        ;;
    solve-rmat)
        libs "$B"
        dist "$p" --dist-matrices rmat --dist-scale "$RMAT_SCALE" --dist-edge-factor "$RMAT_EF" 2>&1 |
            tee -a "$LOG"
        rc=${PIPESTATUS[0]}
        ;;
    spmv | spmv-rmat)
        local k=${MSREP_PIECES:-3}
        [ "$p" = spmv-rmat ] && k=${MSREP_PIECES:-2}
        local g=1
        [ "$ngpu" -ge 2 ] && g=1,2
        [ "$ngpu" -ge 4 ] || [ "$DRY" = 1 ] && g=1,2,4
        [ "$ngpu" -ge 8 ] && g=1,2,4,8
        # shellcheck disable=SC2086 # k: one or more piece numbers
        run env BIN="$(bin bench/bench_msrep_cuda)" OUT="$W/msrep" GPUS=$g REPEAT="${MSREP_REPEAT:-10}" \
            bash "$HERE/msrep_suite.sh" run $k 2>&1 | tee -a "$LOG"
        rc=${PIPESTATUS[0]}
        cat "$W"/msrep/*.md >"$W/$p.md" 2>/dev/null || true
        ;;
    *)
        echo "unknown piece $p (tests solve-poisson solve-rmat spmv spmv-rmat list)" | tee -a "$LOG"
        rc=1
        ;;
    esac
    echo "== $p: exit status $rc after $((SECONDS - t0)) s" | tee -a "$LOG"
    if [ "$DRY" != 1 ]; then
        mkdir -p "$FINAL"
        tar czf "$FINAL/scale-$p.tgz" -C "$W" . 2>/dev/null
        [ -f "$W/$p.md" ] && cp "$W/$p.md" "$FINAL/scale-$p.md"
    fi
    rm -rf "$W"
    return "$rc"
}

[ $# -gt 0 ] || set -- list
if [ "$1" = list ]; then
    echo "machine: $ngpu GPU(s) of $gmem MiB; DEVICES=$DEVICES ITERS=$ITERS REPEAT=$REPEAT METHODS=$METHODS"
    echo "tests          CUDA suites ${SUITES:-solver_dist solver msrep vector spmv_dot} (~2-3 min)"
    echo "solve-poisson  poisson3d $SIDE ($((SIDE * SIDE * SIDE)) rows) (~3-3.5 min at 760, ~4-5 at 900)"
    echo "solve-rmat     rmat scale $RMAT_SCALE, edge factor $RMAT_EF, SPD graph (~4-5 min at 26/16)"
    echo "spmv           msrep_suite.sh piece 3: poisson3d 1e9 (~2.5 min)"
    echo "spmv-rmat      msrep_suite.sh piece 2: rmat 1e9 (~3 min)"
    exit 0
fi
status=0
for p in "$@"; do piece "$p" || status=1; done
exit $status
