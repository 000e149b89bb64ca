#!/bin/bash
# What hisp solve reports on systems whose tolerance the entry type cannot
# reach, or whose recurrence breaks down: one row per case with the stop
# reason, iterations, the relative residual recomputed from x by the CLI,
# the method recurrence's, and the restarts from the true residual.
#
#   bash bench/truth_probe.sh [BACKEND]     (default opencl; reference, cuda)
#
# Reads ../shared/matrices and ../shared/mm_ext (MATRICES, MM_EXT). Prints a
# Markdown table.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:-opencl}
H=${HISP:-build/bin/hisp}
M=${MATRICES:-../shared/matrices}
X=${MM_EXT:-../shared/mm_ext}/ginkgo-project__ginkgo/matrices/test
echo "| input | method | type | precond | rtol | exit | reason | iterations | true rel. residual | recurrence's | restarts |"
echo "|---|---|---|---|--:|--:|---|--:|--:|--:|--:|"
row() { # input method type precond rtol [extra...]
    local in=$1 m=$2 t=$3 pc=$4 rtol=$5
    shift 5
    local out rc
    out=$(timeout 600 "$H" solve "$in" --method "$m" --type "$t" --precond "$pc" --rtol "$rtol" \
        --backend "$B" --json "$@" 2>/dev/null)
    rc=$?
    echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("| %s | %s | %s | %s | %s | %s | %s | %d | %.3g | %.3g | %d |" % (sys.argv[1], sys.argv[2], sys.argv[3],
      sys.argv[4], sys.argv[5], sys.argv[6], d["reason"], d["iterations"], d["relative_residual"],
      d["method_relative_residual"], d["restarts"]))' "$(basename "$in")" "$m" "$t" "$pc" "$rtol" "$rc" ||
        echo "| $(basename "$in") | $m | $t | $pc | $rtol | $rc | (no report) | | | | |"
}
row "$M/494_bus.mtx" cg f32 jacobi 1e-8
row gen:poisson2d:100 cg f32 none 1e-8
row gen:poisson2d:100 bicgstab f32 none 1e-8
row gen:poisson2d:100 lsqr f32 none 1e-8 --maxit 2000
row gen:poisson2d:100 cg f32 none 1e-5
row gen:poisson2d:100 cg f32 none 1e-3
row "$M/Pd.mtx" bicgstab f64 none 1e-8 --rhs random
row "$M/bcsstk13.mtx" bicgstab f64 jacobi 1e-8
row "$X/1138_bus.mtx" bicgstab f64 jacobi 1e-8
