#!/bin/bash
# Fast vs full search of the compound-entry autotuner on one device: for each
# generated matrix and entry type, `hisp tune --search full` and `--search
# fast` (plan cache off), then a markdown table of the best variants, their
# times, the fast search's quality (best full / best fast) and cost (search
# time, variants). Usage (from the repository, after scons):
#   bench/compound_search.sh [BACKEND] [SCALE]     BACKEND opencl (default) or cuda,
#                                                  SCALE small (default) or gpu
set -eu
BACKEND=${1:-opencl}
SCALE=${2:-small}
HISP=${HISP:-build/bin/hisp}
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
if [ "$SCALE" = gpu ]; then
    CASES="helmholtz:1024:c32 helmholtz:1024:c64 fem3x3:40:b3x3_f32 fem3x3:40:b3x3_f64 qsurface:600:q32 qsurface:600:q64"
else
    CASES="helmholtz:400:c32 helmholtz:400:c64 fem3x3:24:b3x3_f32 fem3x3:24:b3x3_f64 qsurface:200:q32 qsurface:200:q64"
fi
TMP=$(mktemp -d)
for c in $CASES; do
    IFS=: read -r gen n t <<<"$c"
    for s in full fast; do
        HISP_OPTIONS=cache_dir=off "$HISP" tune "gen:$gen:$n" --entry "$t" --backend "$BACKEND" --search $s --json \
            >"$TMP/$gen-$n-$t-$s.json"
    done
done
python3 - "$TMP" "$BACKEND" <<'PY'
import json, os, sys
d, backend = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(os.listdir(d)):
    j = json.load(open(os.path.join(d, f)))
    key = (j.get("file") or j["generator"], j["type"])
    rows.setdefault(key, {})[j["search"]] = j
dev = next(iter(rows.values()))["full"]["device"]["name"]
print(f"# compound autotuner: full vs fast search on {backend} ({dev})\n")
print("| matrix | entry | nnz | full: best (ms) | full: time s, variants | fast: best (ms) | fast: time s, variants | quality full/fast | cost fast/full | best CSR-AoS-AoS ms (schedule only) | layout speedup |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (m, e), r in sorted(rows.items()):
    F, Q = r["full"], r["fast"]
    csr = min(x["ms"] for x in F["results"] if x["layout"] == "CSR-AoS-AoS")
    print(f"| {m} | {e} | {F['nnz']} | {F['best']['layout']} {F['best']['schedule']} ({F['best']['ms']:.4f}) "
          f"| {F['tune_ms']/1e3:.1f}, {F['tried']} | {Q['best']['layout']} {Q['best']['schedule']} ({Q['best']['ms']:.4f}) "
          f"| {Q['tune_ms']/1e3:.1f}, {Q['tried']} | {F['best']['ms']/Q['best']['ms']:.3f} | {Q['tune_ms']/F['tune_ms']:.3f} "
          f"| {csr:.4f} | {csr/F['best']['ms']:.2f} |")
PY
rm -rf "$TMP"
