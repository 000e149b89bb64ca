#!/bin/bash
# Stages what a GPU-machine suite needs into .gpu/ (git-ignored), for the
# device tool's `carry` (64 MiB with the working tree): the binaries the
# suite runs, stripped, its scripts, and the shared matrices only where the
# suite reads them. Build first (scons -Q -j2 cuda=yes).
#
#   bash bench/stage_gpu.sh hisparse|csr|add|compound|msrep|runtime|solve|truth|scale|mpi|tune|spgemm|spmm|columns|amg|ilu|mixed|all
#   bash bench/stage_gpu.sh sell [OLD]   (OLD: another checkout's build/ folder, whose
#                                         hisp goes to .gpu/old/bin for a before/after)
#
# Then, on the device: `bash .gpu/gpu_suite.sh hisparse` (and so on; see
# each script's header). Prints the staged size.
set -eu
cd "$(dirname "$0")/.."
suite=${1:-all}
case "$suite" in
hisparse) benches="bench_hisparse_cuda bench_spmv_cuda" tests=1 mats=1 ;;
csr) benches="bench_spmv_cuda" tests=1 mats=1 ;;
add) benches="bench_add_cuda bench_spmv_cuda" tests=1 mats=0 ;;
compound) benches="bench_compound_cuda bench_spmv_cuda" tests=1 mats=0 ;;
msrep) benches="bench_msrep_cuda" tests=1 mats=0 ;;
runtime) benches="bench_runtime_cuda bench_add_cuda bench_vector" tests=1 mats=0 ;;
mpi) benches="" tests=0 mats=0 mpi=1 ;;
solve) benches="bench_solve_cuda" tests=1 mats=0 ;;
truth) benches="bench_solve_cuda" tests=1 mats=0 truth=1 ;;
tune) benches="" tests=1 mats=1 ;;
sell) benches="" tests=1 mats=1 old=${2:-} ;;
spgemm) benches="bench_spgemm_cuda" tests=1 mats=1 ;;
spmm) benches="bench_spmm_cuda" tests=1 mats=0 ;;
columns) benches="bench_columns bench_spmm_cuda" tests=1 mats=0 ;;
amg) benches="" tests=1 mats=0 ;;
ilu) benches="bench_ilu_cuda" tests=1 mats=0 ;;
mixed) benches="bench_mixed bench_precond" tests=1 mats=0 truth=1 ;;
scale) benches="bench_solve_cuda bench_msrep_cuda" tests=1 mats=0 mpi=1 ;;
surface) benches="" tests=1 mats=1 lib=1 ;;
all) benches="bench_hisparse_cuda bench_spmv_cuda bench_add_cuda bench_compound_cuda bench_msrep_cuda" tests=1 mats=1 ;;
*)
    sed -n '2,11p' "$0"
    exit 1
    ;;
esac
for b in $benches; do
    [ -x "build/bench/$b" ] || { echo "stage_gpu: build/bench/$b missing: build with cuda=yes first" >&2; exit 1; }
done
rm -rf .gpu
mkdir -p .gpu/bench .gpu/bin
cp build/bin/hisp .gpu/bin/
if [ "${mpi:-0}" = 1 ]; then cp build/bin/hisp-mpi .gpu/bin/; fi
if [ -n "${old:-}" ]; then mkdir -p .gpu/old/bin && cp "$old/bin/hisp" .gpu/old/bin/; fi
for b in $benches; do cp "build/bench/$b" .gpu/bench/; done
cp bench/*.sh bench/*.py .gpu/
if [ "$tests" = 1 ]; then
    mkdir -p .gpu/tests
    cp build/tests/check_hisp .gpu/tests/
    grep -ho 'suite_create("[a-z_]*")' tests/*.c | sed 's/.*("//; s/")//' >.gpu/tests/suites
fi
if [ "${lib:-0}" = 1 ]; then # libhisp.so and the external example built against it
    mkdir -p .gpu/lib
    cp -P build/lib/libhisp.so* .gpu/lib/
    cc -O2 examples/spmv_example.c -Icore -Lbuild/lib -lhisp -lm -o .gpu/bin/spmv_example
fi
strip .gpu/bin/* .gpu/bench/* .gpu/tests/* .gpu/old/bin/* 2>/dev/null || true
if [ "$mats" = 1 ]; then
    mkdir -p .gpu/matrices
    cp ../shared/matrices/*.mtx .gpu/matrices/
fi
if [ "${truth:-0}" = 1 ]; then # truth_gpu.sh's matrices, in the layout the tests expect
    g=.gpu/mm_ext/ginkgo-project__ginkgo/matrices/test
    mkdir -p .gpu/matrices "$g"
    cp ../shared/matrices/{494_bus,bcsstk13,LFAT5,Pd}.mtx .gpu/matrices/
    cp ../shared/mm_ext/ginkgo-project__ginkgo/matrices/test/1138_bus.mtx "$g/"
fi
du -sh .gpu
