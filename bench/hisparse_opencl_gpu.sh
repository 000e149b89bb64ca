#!/bin/sh
# For the GPU machine (NVIDIA's OpenCL platform; not runnable on the CI VM):
# HiSparse SpMV through the OpenCL backend with the atomic mapping, whose
# leaf adds use red.global.add through inline PTX on NVIDIA's platform
# (NV_ASM=2; a build that fails steps down to the compare-exchange loops),
# against hisp's CSR on the same device; then the hisparse_dev tests on
# every OpenCL device.
#
#   bench/hisparse_opencl_gpu.sh [--device N] [--repeat R] [--no-tests] [--small]
#
# The device index is hisp's OpenCL device list (GPUs first; `hisp info`).
# Prints one line per (matrix, precision, op): CSR and HiSparse (median ms),
# both checked against the
# reference (--check). --small: CPU-sized matrices (to try the script on a
# CPU device). Needs build/bin/hisp and build/tests/check_hisp.
set -eu
cd "$(dirname "$0")/.."

device=0
repeat=20
tests=1
small=0
while [ $# -gt 0 ]; do
    case "$1" in
    --device) device="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --no-tests) tests=0; shift ;;
    --small) small=1; shift ;;
    --help|-h) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
    esac
done

hisp=./build/bin/hisp
dir=${HISP_BENCH_DIR:-/tmp/hisp-bench-gpu}
mkdir -p "$dir"
"$hisp" info

if [ "$tests" = 1 ]; then
    # every OpenCL device, all three mappings (owner runs only on CPU devices)
    HISP_TEST_BACKENDS=opencl CK_RUN_SUITE=hisparse_dev ./build/tests/check_hisp
fi

ms() { # hisp spmv arguments... -> median ms
    out=$("$hisp" spmv "$@" --backend opencl --device "$device" --repeat "$repeat" --check --json 2>&1) ||
        { echo "FAILED: $out" | head -3; return 0; }
    echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.4f" % j["timing"]["median_ms"])'
}

specs="poisson3d:--n:128 rmat:--scale:20 banded:--n:2000000 circuit:--n:2000000"
[ "$small" = 1 ] && specs="poisson3d:--n:30 rmat:--scale:12"
for s in $specs; do
    spec=$(echo "$s" | tr ':' ' ')
    name=$(echo "$spec" | cut -d' ' -f1)
    f="$dir/$name-$small.mtx"
    # shellcheck disable=SC2086
    [ -s "$f" ] || "$hisp" gen $spec -o "$f" >/dev/null
    for p in f32 f64; do
        for op in N T; do
            t=""
            [ "$op" = T ] && t="--transpose"
            csr=$(ms "$f" --format csr --precision "$p" $t)
            red=$(ms "$f" --format hisparse --precision "$p" $t)
            echo "$name $p $op: csr $csr ms  hisparse (red.global) $red ms"
        done
    done
done
