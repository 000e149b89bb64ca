#!/bin/sh
# Build a fuzz target (libFuzzer + ASan + UBSan, straight from the core
# sources, no OpenCL/CUDA) into fuzz/out/ and run it.
#   fuzz/run.sh [seconds] [mtx|hisp]   default 180 s, the Matrix Market reader
# mtx: the Matrix Market reader (seeds fuzz/corpus); hisp: the .hisp loader
# (seeds fuzz/corpus_hisp). New inputs go to fuzz/out/corpus[_hisp]; a crash
# leaves fuzz/out/crash-* and a non-zero exit status.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-180}
target=${2:-mtx}
out=fuzz/out
CC=${CC:-clang}
if [ "$target" = hisp ]; then
    mkdir -p "$out/corpus_hisp"
    $CC -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -Icore \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -fno-omit-frame-pointer -pthread \
        fuzz/fuzz_hisp.c core/*.c backends/registry.c backends/reference/reference.c \
        -lm -o "$out/fuzz_hisp"
    exec "$out/fuzz_hisp" -max_len=8192 -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
        "$out/corpus_hisp" fuzz/corpus_hisp
fi
mkdir -p "$out/corpus"
$CC -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -Icore \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -pthread \
    fuzz/fuzz_mtx.c core/*.c backends/registry.c backends/reference/reference.c \
    -lm -o "$out/fuzz_mtx"
exec "$out/fuzz_mtx" -max_len=4096 -dict=fuzz/mtx.dict -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
    "$out/corpus" fuzz/corpus
