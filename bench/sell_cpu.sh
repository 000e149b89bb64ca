#!/bin/bash
# SELL-C-sigma against hisp CSR on PoCL (this machine's CPU), through
# `hisp bench` (wall per call with a synchronize): generated matrices at a
# CPU's size and the larger files of ../shared/matrices, f64, op N; then
# what `hisp tune` (the format choice) picks for each. Writes one line per
# matrix to stdout; `bash bench/sell_cpu.sh > OUT.md`.
set -u
H=${HISP:-build/bin/hisp}
M=${HISP_MATRICES:-../shared/matrices}
export HISP_OPTIONS="cache_dir=$(mktemp -d)"
ms() { # spec, format -> median wall ms of the opencl row
  "$H" bench "$1" --backends opencl --format "$2" --repeat 20 --json 2>/dev/null |
    python3 -c 'import json,sys
d=json.load(sys.stdin)
print(next(("%.4f"%r["ms"] for r in d["results"] if r["backend"]=="opencl" and r["status"]=="ok"),"-"))'
}
pick() {
  "$H" tune "$1" --backend opencl --json 2>/dev/null |
    python3 -c 'import json,sys
d=json.load(sys.stdin); print(d["best"]["format"])'
}
echo "| matrix | CSR ms | SELL ms | SELL/CSR | auto picks |"
echo "|---|--:|--:|--:|---|"
for s in gen:poisson3d:60:42 gen:banded:300000:42 gen:rmat:17:42 gen:circuit:300000:42 \
  gen:blockdiag:300000:42 gen:dense:1024:42 "$M/bcsstk33.mtx" "$M/CA-HepPh.mtx" \
  "$M/luxembourg.mtx" "$M/bayer10.mtx" "$M/fidapex6.mtx" "$M/Groebner_id2003_aug.mtx"; do
  c=$(ms "$s" csr) e=$(ms "$s" sell)
  r=$(python3 -c "print('%.2f'%($e/$c))" 2>/dev/null || echo -)
  echo "| ${s##*/} | $c | $e | $r | $(pick "$s") |"
done
rm -rf "${HISP_OPTIONS#cache_dir=}"
