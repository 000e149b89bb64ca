#!/bin/bash
# What solves report, on the GPU machine: the CUDA solver suites and
# solver_truth on NVIDIA's OpenCL, the cases of bench/truth_probe.sh on CUDA,
# and CG per iteration against the cuSPARSE + cuBLAS loop. Stage with
# `bash bench/stage_gpu.sh truth`; on the device `OUT=$OUT bash .gpu/truth_gpu.sh`
# (about a minute on an H200); writes $OUT/truth.log.
set -u
H=$(cd "$(dirname "$0")" && pwd)
export HISP_MATRICES=$H/matrices HISP_OPTIONS="cache_dir=$OUT/cache"
L=$OUT/truth.log
{ date -u; nvidia-smi -L; } >>"$L" 2>&1
for s in solver_truth solver solver_ls cli_solve; do
  echo "== suite $s (cuda)" >>"$L"
  timeout 150 env HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s "$H/tests/check_hisp" >>"$L" 2>&1; echo "-- exit $?" >>"$L"
done
echo "== suite solver_truth (opencl: NVIDIA)" >>"$L"
timeout 120 env HISP_TEST_BACKENDS=opencl CK_RUN_SUITE=solver_truth "$H/tests/check_hisp" >>"$L" 2>&1; echo "-- exit $?" >>"$L"
M=$H/matrices; X=$H/mm_ext/ginkgo-project__ginkgo/matrices/test
p() { echo "== probe: $*" >>"$L"; timeout 60 "$H/bin/hisp" solve "$@" --backend cuda --json 2>>"$L" | grep -E '"(converged|reason|iterations|relative_residual|method_relative_residual|solver_relative_residual|restarts|solve_ms)"' >>"$L"; }
p "$M/494_bus.mtx" --method cg --type f32 --precond jacobi
p gen:poisson2d:100 --method cg --type f32
p gen:poisson2d:100 --method bicgstab --type f32
p "$M/bcsstk13.mtx" --method bicgstab --precond jacobi
p "$X/1138_bus.mtx" --method bicgstab --precond jacobi
echo "== bench_solve_cuda cg" >>"$L"
timeout 200 "$H/bench/bench_solve_cuda" --parts cg --sizes 160,200 --iters 500 --repeat 3 >>"$L" 2>&1; echo "-- exit $?" >>"$L"
rm -rf "$OUT/cache"
