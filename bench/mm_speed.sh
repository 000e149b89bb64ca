#!/usr/bin/env bash
# Matrix Market reading and writing: hisp (`hisp convert --repeat`, the
# library's hisp_matrix_read_mtx / hisp_matrix_write_mtx) against
# fast_matrix_market (pip install fast_matrix_market) with the same thread
# counts, in one run, on one generated file; wall time per call, median.
#
#   bash bench/mm_speed.sh [ENTRIES] [REPEATS] [OUTDIR]
#   (defaults: 30000000 entries, 5 repeats, bench/results/mm-cpu-$(date +%F))
#
# The file: ENTRIES random entries of a 1M x 1M matrix, values uniform in
# [0, 1) written by fast_matrix_market (shortest round-trip digits: 16-17
# significant digits, the long-mantissa case). hisp's threads are capped
# with the threads option (HISP_OPTIONS=threads=N), fmm's with parallelism=.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-30000000}
REPS=${2:-5}
OUT=${3:-bench/results/mm-cpu-$(date +%F)}
BIN=build/bin/hisp
TMP=${TMPDIR:-/tmp}/hisp_mm_speed.$$
mkdir -p "$OUT" "$TMP"
trap 'rm -rf "$TMP"' EXIT
[ -x "$BIN" ] || { echo "build first: scons $BIN" >&2; exit 1; }
python3 - "$N" "$TMP/m.mtx" <<'PY'
import sys
import numpy as np
import fast_matrix_market as fmm
n, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(24)
i = rng.integers(0, 1000000, n)
j = rng.integers(0, 1000000, n)
v = rng.random(n)
fmm.write_coo(path, (v, (i, j)), shape=(1000000, 1000000))
PY
{
    echo "# $(date -u +%FT%TZ) $(uname -n) $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) CPUs)"
    echo "# hisp $(git rev-parse --short HEAD), fast_matrix_market $(python3 -c 'import fast_matrix_market as f; print(f.__version__)')"
    echo "# file: $N entries, $(stat -c %s "$TMP/m.mtx") bytes; $REPS calls each"
    for t in 1 2; do
        echo "## threads $t"
        # one untimed read, REPS timed reads, REPS timed writes
        HISP_OPTIONS=threads=$t "$BIN" convert "$TMP/m.mtx" -o "$TMP/h.mtx" --repeat "$REPS" \
            --json >"$TMP/h.json"
        python3 bench/mm_speed.py hisp read "$TMP/h.json"
        python3 bench/mm_speed.py read "$TMP/m.mtx" "$t" "$REPS"
        python3 bench/mm_speed.py hisp write "$TMP/h.json"
        python3 bench/mm_speed.py write "$TMP/m.mtx" "$t" "$REPS" "$TMP/f.mtx"
    done
} 2>&1 | tee "$OUT/mm_speed.txt"
