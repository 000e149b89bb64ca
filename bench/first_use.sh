#!/bin/bash
# A first use on a device against a warm one: hisp add and hisp solve with
# empty kernel caches (hisp's cache_dir and PoCL's own, both fresh), then the
# same commands again; prints each run's "kernels" report and its times.
#
#   bash bench/first_use.sh [BACKEND]     (default opencl)
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
t = " ".join("%s %.3f" % (f, d[f]) for f in ("device_ms", "median_ms", "prepare_ms", "ms_per_iteration") if f in d)
print("| %s | %s | %d built in %.0f ms, %d loaded in %.0f ms | %s |" % (sys.argv[1], sys.argv[2],
      k.get("programs_built", 0), k.get("build_ms", 0), k.get("programs_loaded", 0), k.get("load_ms", 0), t))' "$1" "$2"
}
echo "| command | cache | kernels | times (ms) |"
echo "|---|---|---|---|"
for run in cold warm; do
    "$H" add gen:banded:60000 gen:random:60000 -o "$D/c.hisp" --backend "$B" --json 2>/dev/null | show "add banded + random 60000" "$run"
done
rm -rf "${D:?}/hisp"/* "${D:?}/pocl"/*
for run in cold warm; do
    "$H" solve gen:poisson2d:300 --method cg --precond jacobi --maxit 100 --backend "$B" --json 2>/dev/null |
        show "solve cg jacobi poisson2d 300, 100 it." "$run"
done
