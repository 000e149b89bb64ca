#!/bin/bash
# MSREP on machines with 2 and 4 NVIDIA GPUs (issue 7): bench_msrep_cuda over
# rmat and poisson3d of 0.5, 1 and 2 billion nonzeros (f64), in pieces that
# each stay under 10 minutes.
#
#   bash bench/msrep_suite.sh list         the pieces, numbered
#   bash bench/msrep_suite.sh run K [K..]  run pieces K.. (a "gen" piece first for
#                                          each size: it writes the raw CSR cache)
#   bash bench/msrep_suite.sh all          every piece in order
#   bash bench/msrep_suite.sh table        join the pieces' markdown into one file
#
# Environment: BIN (default build/bench/bench_msrep_cuda, else ./bench/...),
# OUT (default bench/out/msrep), CACHE (raw CSR files, default $OUT/cache; a
# 2e9-nonzero f64 matrix takes ~24 GB of disk), GPUS (default 1,2,4 capped
# at the GPUs nvidia-smi lists), REPEAT (default 10), SIZES (default
# "5e8 1e9 2e9"), MATRICES (default "rmat poisson3d").
# Host memory: about 3x the CSR size (A, the 1-GPU yardstick's copy, the
# temporary CSC of pcsc): 2e9 f64 needs ~75 GB.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build/bench/bench_msrep_cuda}
[ -x "$BIN" ] || BIN=bench/bench_msrep_cuda
OUT=${OUT:-bench/out/msrep}
CACHE=${CACHE:-$OUT/cache}
REPEAT=${REPEAT:-10}
SIZES=${SIZES:-"5e8 1e9 2e9"}
MATRICES=${MATRICES:-"rmat poisson3d"}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -z "${GPUS:-}" ]; then
    GPUS=1
    [ "$ngpu" -ge 2 ] && GPUS=1,2
    [ "$ngpu" -ge 4 ] && GPUS=1,2,4
fi
mkdir -p "$OUT" "$CACHE"
# the same libcusparse fallback as gpu_suite.sh (the binary links it dynamically)
if ldd "$BIN" 2>/dev/null | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
fi

pieces=()
for m in $MATRICES; do
    for s in $SIZES; do
        pieces+=("$m $s none gen")
        pieces+=("$m $s rowblock,pcsr a")
        pieces+=("$m $s pcsc,pcoo b")
    done
done

run_piece() {
    local k=$1 m s kinds tag
    read -r m s kinds tag <<<"${pieces[$k]}"
    local base="$OUT/$m-$s-$tag"
    echo "== piece $k: $m nnz $s kinds $kinds GPUs $GPUS ($(date -u +%T) UTC)"
    timeout 590 "$BIN" --matrix "$m" --nnz "$s" --gpus "$GPUS" --kinds "$kinds" \
        --repeat "$REPEAT" --cache "$CACHE" --csv "$base.csv" --md "$base.md" 2>&1 | tee "$base.log"
    local rc=${PIPESTATUS[0]}
    [ -f "$base.md" ] && cat "$base.md"
    echo "== piece $k exit status $rc"
    return "$rc"
}

cmd=${1:-list}
shift || true
case "$cmd" in
list)
    echo "machine: $ngpu GPU(s), GPUS=$GPUS, binary $BIN"
    for k in "${!pieces[@]}"; do echo "$k: ${pieces[$k]}"; done
    ;;
run)
    st=0
    for k in "$@"; do run_piece "$k" || st=$?; done
    exit $st
    ;;
all)
    st=0
    for k in "${!pieces[@]}"; do run_piece "$k" || st=$?; done
    exit $st
    ;;
table)
    {
        echo "# MSREP on $ngpu GPU(s) ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)), $(date -u +%F)"
        for f in "$OUT"/*-a.md "$OUT"/*-b.md; do [ -f "$f" ] && cat "$f"; done
    } >"$OUT/msrep-summary.md"
    cat "$OUT/msrep-summary.md"
    ;;
*)
    sed -n '2,20p' "$0"
    exit 1
    ;;
esac
