#!/bin/sh
# Build the Matrix Market fuzz target (libFuzzer + ASan + UBSan, straight from
# the core sources, no OpenCL/CUDA) into fuzz/out/ and run it.
#   fuzz/run.sh [seconds]      default 180
# New inputs go to fuzz/out/corpus; a crash leaves fuzz/out/crash-* and a
# non-zero exit status.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-180}
out=fuzz/out
mkdir -p "$out/corpus"
CC=${CC:-clang}
$CC -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -Icore \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -pthread \
    fuzz/fuzz_mtx.c core/*.c backends/registry.c backends/reference/reference.c \
    -lm -o "$out/fuzz_mtx"
exec "$out/fuzz_mtx" -max_len=4096 -dict=fuzz/mtx.dict -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
    "$out/corpus" fuzz/corpus
