#!/bin/bash
# The user's surface on the GPU machine, in one time-boxed pass: the CUDA
# tests of the library's loading (cuSPARSE/NVRTC opened at run time), the
# entry types, the format choice and hisp bench; the external example; the
# cross-vendor table of `hisp bench`; the format choice on real matrices;
# `hisp demo` sized for the device. Builds nothing: stage with
# `bash bench/stage_gpu.sh surface`, carry .gpu, then on the device
#
#   OUT=$OUT [STEPS="tests opencl example bench tune demo"] [BENCH_OPS=...] \
#       [SUITES=...] [QUICK_SUITES=...] bash .gpu/surface_gpu.sh
#
# Each step has its own time limit (BUDGET seconds in all, default 420);
# results are written as they come, so a cut run still returns what ran.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FINAL=${OUT:-$PWD/out}
OUT=$(mktemp -d) # packed into $FINAL/surface.tgz at the end (the device tool returns few files)
mkdir -p "$FINAL"
LOG=$OUT/surface.log
trap 'tar czf "$FINAL/surface.tgz" -C "$OUT" --exclude=cache . 2>/dev/null; cp "$LOG" "$FINAL/"' EXIT
H=$HERE/bin/hisp
T=$HERE/tests/check_hisp
M=$HERE/matrices
export HISP_MATRICES=$M
export HISP_OPTIONS="cache_dir=$OUT/cache"
t0=$(date +%s)
left() { echo $((${BUDGET:-420} - ($(date +%s) - t0))); }
step() { # step NAME SECONDS CMD...: runs CMD with the smaller of SECONDS and what is left
    local name=$1 s=$2
    shift 2
    local l
    l=$(left)
    [ "$l" -gt 5 ] || { echo "== $name: skipped, no time left" | tee -a "$LOG"; return; }
    [ "$s" -lt "$l" ] || s=$l
    echo "== $name (limit ${s}s)" | tee -a "$LOG"
    local a=$(date +%s)
    timeout "$s" "$@" >>"$LOG" 2>&1
    echo "-- $name: exit $? after $(($(date +%s) - a)) s" | tee -a "$LOG"
}
{ date -u; nvidia-smi -L; } >>"$LOG" 2>&1

want() { case " ${STEPS:-tests opencl example bench tune demo} " in *" $1 "*) return 0 ;; esac; return 1; }

if want tests; then
    for s in ${SUITES-link options compound_op cli_types tune_format cli_bench}; do
        step "suite $s (cuda)" 60 env HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s "$T"
    done
    for s in ${QUICK_SUITES-vector spmv transfer interop cache compound hisparse_add hisparse_dev solver msrep}; do
        step "suite $s (cuda, quick)" 120 env HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda \
            CK_RUN_SUITE=$s "$T"
    done
fi
if want opencl; then # NVIDIA's OpenCL: the CSR families and HiSparse's red.global.add leaves
    for s in spmv hisparse_dev; do
        step "suite $s (opencl)" 120 env HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=opencl \
            CK_RUN_SUITE=$s "$T"
    done
fi

# the external example against libhisp.so: CSR SpMV opens neither cuSPARSE nor NVRTC
if want example && [ -x "$HERE/bin/spmv_example" ]; then
    step "example (cuda)" 30 env LD_LIBRARY_PATH="$HERE/lib" "$HERE/bin/spmv_example" cuda
    LD_DEBUG=files LD_LIBRARY_PATH="$HERE/lib" "$HERE/bin/spmv_example" cuda 2>&1 |
        grep -E 'cusparse|nvrtc' | head -3 >"$OUT/example_libs.txt"
    echo "libraries the example opened (cusparse|nvrtc): $(wc -l <"$OUT/example_libs.txt")" | tee -a "$LOG"
fi

# the cross-vendor table, one command per operation
if want bench; then
    for op in ${BENCH_OPS:-spmv spmvt solve add}; do
        step "bench $op" 120 "$H" bench gen:poisson3d:200 --op "$op" --backends all --json \
            --plot "$OUT/bench_$op.svg"
    done
    step "bench spmv f32" 40 "$H" bench gen:poisson3d:200 --type f32 --backends all
    step "bench spmv helmholtz" 40 "$H" bench gen:helmholtz:1000 --backends all
    step "bench spmv bcsstk33" 30 "$H" bench "$M/bcsstk33.mtx" --backends all
    step "spmv dwg961a --op h" 20 "$H" spmv "$M/dwg961a.mtx" --op h --check --backend cuda
    step "spmv fem3x3 --op t" 20 "$H" spmv gen:fem3x3:20 --op t --check --backend cuda
    step "mspmv cusparse" 30 "$H" mspmv gen:poisson3d:100 --devices 1 --kernel cusparse \
        --check --backend cuda
fi

# the format choice on real matrices (hisp tune = spmv --format auto's tables)
if want tune; then step "tune_format cuda" 300 bash "$HERE/tune_format.sh" cuda 0 "$OUT/tune-cuda"; fi
if want demo; then step "demo" 120 "$H" demo --json; fi
date -u >>"$LOG"
