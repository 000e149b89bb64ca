#!/bin/sh
# Build a fuzz target (libFuzzer + ASan + UBSan, straight from the core
# sources, no OpenCL/CUDA) into fuzz/out/ and run it.
#   fuzz/run.sh [seconds] [mtx|hisp|plan|cache]   default 180 s, mtx
# mtx: the Matrix Market reader (seeds fuzz/corpus); hisp: the .hisp loader
# (fuzz/corpus_hisp); plan: the tune plan file parser (fuzz/corpus_plan);
# cache: the kernel-cache entry validator (fuzz/corpus_cache). New inputs go
# to fuzz/out/corpus[_NAME]; a crash leaves fuzz/out/crash-* and a non-zero
# exit status.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-180}
target=${2:-mtx}
out=fuzz/out
CC=${CC:-clang}
case "$target" in
mtx) seeds=fuzz/corpus new=$out/corpus args="-max_len=4096 -dict=fuzz/mtx.dict" ;;
hisp) seeds=fuzz/corpus_hisp new=$out/corpus_hisp args="-max_len=8192" ;;
plan) seeds=fuzz/corpus_plan new=$out/corpus_plan args="-max_len=2048 -dict=fuzz/plan.dict" ;;
cache) seeds=fuzz/corpus_cache new=$out/corpus_cache args="-max_len=1024" ;;
*) echo "unknown target $target (mtx, hisp, plan, cache)" >&2; exit 1 ;;
esac
mkdir -p "$new"
# every core source but the solvers, which no target reaches (and whose
# reference uses CMPLX, which clang's view of glibc lacks)
core=$(find core -name '*.c' -not -path 'core/solver/*' | sort)
# shellcheck disable=SC2086
$CC -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -Icore \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -pthread \
    "fuzz/fuzz_$target.c" $core backends/registry.c backends/reference/reference.c \
    -lz -lbz2 -lm -o "$out/fuzz_$target"
# shellcheck disable=SC2086
exec "$out/fuzz_$target" $args -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" "$new" "$seeds"
