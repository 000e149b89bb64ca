#!/bin/bash
# A first use on a device against a warm one: hisp add and hisp solve with
# empty kernel caches (hisp's cache_dir and PoCL's own, both fresh), then the
# same commands again; prints each run's "kernels" report, its times and the
# process's wall time (start to exit, reading the input included).
#
#   bash bench/first_use.sh [BACKEND]     (default opencl; HISP=path/to/hisp)
#
# It solves poisson3d 64^3 with CG, and on cuda also with BiCGSTAB,
# ILU(0)-GMRES and AMG-CG, each with a fresh cache.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:-opencl}
H=${HISP:-build/bin/hisp}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export HISP_OPTIONS="cache_dir=$D/hisp" POCL_CACHE_DIR=$D/pocl
mkdir -p "$D/hisp" "$D/pocl"
show() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
k = d.get("kernels", {})
t = " ".join("%s %.3f" % (f, d[f]) for f in ("device_ms", "median_ms", "prepare_ms", "setup_ms", "solve_ms", "ms_per_iteration") if f in d)
print("| %s | %s | %d built in %.0f ms, %d loaded in %.0f ms | %s | %.0f |" % (sys.argv[1], sys.argv[2],
      k.get("programs_built", 0), k.get("build_ms", 0), k.get("programs_loaded", 0), k.get("load_ms", 0), t,
      float(sys.argv[3])))' "$1" "$2" "$3"
}
# run NAME ARGS...: cold (caches emptied) then warm
run() {
    local name=$1
    shift
    rm -rf "${D:?}/hisp"/* "${D:?}/pocl"/*
    for c in cold warm; do
        local t0 t1
        t0=$(date +%s%N)
        "$H" "$@" --backend "$B" --json >"$D/out.json" 2>/dev/null
        t1=$(date +%s%N)
        show "$name" "$c" $(((t1 - t0) / 1000000)) <"$D/out.json"
    done
}
echo "| command | cache | kernels | times (ms) | process wall ms |"
echo "|---|---|---|---|---|"
run "add banded + random 60000" add gen:banded:60000 gen:random:60000 -o "$D/c.hisp"
run "solve cg jacobi poisson2d 300, 100 it." solve gen:poisson2d:300 --method cg --precond jacobi --maxit 100
run "solve cg poisson3d 64" solve gen:poisson3d:64 --method cg
if [ "$B" = cuda ]; then
    run "solve bicgstab poisson3d 64" solve gen:poisson3d:64 --method bicgstab
    run "solve gmres ilu0 poisson3d 64" solve gen:poisson3d:64 --method gmres --precond ilu0
    run "solve cg amg poisson3d 64" solve gen:poisson3d:64 --method cg --precond amg
fi
