#!/bin/bash
# On the GPU machine: kernel builds reported apart from the operations on CUDA
# (a cold and a warm cache), and CUDA runs of the suites the build counters,
# the CLI options and the reliability checks touch. Stage with
# `bash bench/stage_gpu.sh truth`; on the device `OUT=$OUT bash .gpu/builds_gpu.sh`
# (about 2 minutes on an H200); writes $OUT/gpu2.log.
set -u
H=$(cd "$(dirname "$0")" && pwd)
T=$H/tests/check_hisp
export HISP_MATRICES=$H/matrices HISP_OPTIONS="cache_dir=$OUT/cache"
L=$OUT/gpu2.log
t0=$(date +%s)
{ date -u; nvidia-smi -L; } >>"$L" 2>&1
step() { local name=$1 s=$2; shift 2; local left=$((520 - ($(date +%s) - t0)))
  [ "$left" -gt 5 ] || { echo "== $name: skipped, no time left" >>"$L"; return; }
  [ "$s" -lt "$left" ] || s=$left
  echo "== $name" >>"$L"; local a=$(date +%s); timeout "$s" "$@" >>"$L" 2>&1; echo "-- $name: exit $? after $(($(date +%s) - a)) s" >>"$L"; }
step "info" 20 "$H/bin/hisp" info
step "spmv cold (cuda)" 60 "$H/bin/hisp" spmv gen:poisson3d:100 --backend cuda --json
step "spmv warm (cuda)" 30 "$H/bin/hisp" spmv gen:poisson3d:100 --backend cuda --repeat 20 --json
step "add cold (cuda)" 60 "$H/bin/hisp" add gen:poisson3d:60 gen:poisson3d:60:3 -o "$OUT/c.hisp" --backend cuda --repeat 5 --json
for s in cache cli_options cli_bench interop handles solver_truth solver_dist msrep transfer; do
  step "suite $s (cuda)" 90 env HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s "$T"
done
rm -rf "$OUT/cache" "$OUT/c.hisp"
