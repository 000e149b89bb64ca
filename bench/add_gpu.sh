#!/bin/bash
# The HiSparse addition benchmark (issue 5) on the GPU machine: hisp_matrix_add
# (A+B and A^T+B^T) against cuSPARSE csrgeam2 on the GPU suite, f32 and f64,
# with B = hisp_matrix_perturb(A, sigma 10). Builds nothing: it runs
# bench_add_cuda from the shipped folder (bench/ next to this script, as
# gpu_suite.sh's layout) or from the repository's build/bench/.
#
#   bash add_gpu.sh                  every suite matrix, f32 and f64, CUDA backend
#   MATRICES="banded rmat" PREC=f64 REPEAT=20 bash add_gpu.sh
#   BACKENDS="cuda opencl" bash add_gpu.sh    also hisp on NVIDIA's OpenCL platform
#   QUICK=1 bash add_gpu.sh          the small suite, a few runs (a smoke test)
#
# Other settings: SCALE (gpu), WARMUP (3), ADD_ARGS (more options, e.g.
# "--node-size 64"), BENCH_TIMEOUT (seconds per matrix, 600), BENCH_ADD (the
# program's path). Writes under $OUT (default ./out): add.log (everything),
# bench_add[_<backend>].csv, summary_add[_<backend>].md (one row per matrix and
# precision, the geometric means at the end) and plots add_gpu-*.png. Exit
# status: 2 when a result check failed (FAIL in the log), else 0.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
LOG=$OUT/add.log
: >"$LOG"

BIN=${BENCH_ADD:-}
for b in "$HERE/bench/bench_add_cuda" "$HERE/../build/bench/bench_add_cuda"; do
    [ -z "$BIN" ] && [ -x "$b" ] && BIN=$b
done
if [ -z "$BIN" ]; then
    echo "bench_add_cuda not found next to $HERE (bench/) nor in build/bench/ (scons cuda=yes)" | tee -a "$LOG"
    exit 3
fi
PLOT=$HERE/plot.py

# libcusparse: the toolkit's, else the pip wheel's (as gpu_suite.sh)
if ldd "$BIN" | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
    echo "libcusparse from $d" >>"$LOG"
fi
{
    date -u
    nvidia-smi -L 2>&1
    echo "$BIN"
    ldd "$BIN" | grep -iE "cusparse|opencl|not found"
} >>"$LOG" 2>&1

MATS=${MATRICES:-poisson3d banded rmat dense circuit blockdiag}
SCALE=${SCALE:-gpu}
REPEAT=${REPEAT:-30}
WARMUP=${WARMUP:-3}
if [ "${QUICK:-0}" = 1 ]; then
    SCALE=small
    REPEAT=5
    WARMUP=1
fi
status=0
for be in ${BACKENDS:-cuda}; do
    sfx=$([ "$be" = cuda ] && echo "" || echo "_$be")
    PARTS=$(mktemp -d)
    for m in $MATS; do
        echo "== $m ($be)" >>"$LOG"
        # shellcheck disable=SC2086 # ADD_ARGS: several options
        timeout "${BENCH_TIMEOUT:-600}" "$BIN" --scale "$SCALE" --matrices "$m" --precision "${PREC:-both}" \
            --repeat "$REPEAT" --warmup "$WARMUP" --backend "$be" --csv "$PARTS/$m.csv" \
            --summary "$PARTS/$m.sum" ${ADD_ARGS:-} >>"$LOG" 2>&1
        rc=$?
        echo "bench $m ($be) exit $rc" | tee -a "$LOG"
        [ $rc = 2 ] && status=2
    done
    # merge: one CSV header, one summary table (the parts' table rows)
    csv=$OUT/bench_add$sfx.csv
    sum=$OUT/summary_add$sfx.md
    : >"$csv"
    : >"$sum"
    first=1
    for m in $MATS; do
        [ -f "$PARTS/$m.csv" ] || continue
        # the first table of a part's summary (the device-time one)
        first_table() { awk '/^\|/ {t = 1; print; next} t {exit}' "$1"; }
        if [ $first = 1 ]; then
            cat "$PARTS/$m.csv" >"$csv"
            first_table "$PARTS/$m.sum" >"$sum"
            first=0
        else
            tail -n +2 "$PARTS/$m.csv" >>"$csv"
            first_table "$PARTS/$m.sum" | tail -n +3 >>"$sum"
        fi
    done
    for m in $MATS; do
        [ -f "$PARTS/$m.sum" ] && grep -E "hisp n/a" "$PARTS/$m.sum" >>"$sum.notes"
    done
    rm -rf "$PARTS"
    [ -s "$csv" ] || continue
    # geometric means over the merged results (the issue's targets)
    python3 - "$csv" "be=$be" >>"$sum" 2>>"$LOG" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
be = sys.argv[2].split("=", 1)[1]
hs = "hisp-" + be
def med(m, p, op, impl):
    for r in rows:
        if (r["matrix"], r["precision"], r["op"], r["impl"]) == (m, p, op, impl):
            return float(r["median_ms"])
    return None
cases = sorted({(r["matrix"], r["precision"]) for r in rows})
def gmean(pairs):
    v = [math.log(a / b) for a, b in pairs if a and b]
    return (math.exp(sum(v) / len(v)), len(v)) if v else (None, 0)
for prec in sorted({p for _, p in cases}) + ["all"]:
    cs = [c for c in cases if prec in ("all", c[1])]
    s, n = gmean([(med(m, p, "N", "cusparse-geam"), med(m, p, "N", hs)) for m, p in cs])
    t, k = gmean([(med(m, p, "T", hs), med(m, p, "N", hs)) for m, p in cs])
    st, kt = gmean([(med(m, p, "T", "cusparse-csc+geam"), med(m, p, "T", hs)) for m, p in cs])
    f = lambda x: "n/a" if x is None else "%.2f" % x
    print("\n%s: geometric means: csrgeam2 / hisp (A+B) %s over %d (target >= 10); "
          "hisp (A^T+B^T) / hisp (A+B) %s over %d (target <= 1.5); "
          "csr2csc+csrgeam2 / hisp (A^T+B^T) %s over %d" % (prec, f(s), n, f(t), k, f(st), kt))
# as the user waits: wall clock per call, csrgeam2 with C's allocation
print("\n| matrix | prec | csrgeam2+alloc N wall ms | hisp N wall ms | hisp N device ms | "
      "**csrgeam2 / hisp N** | csrgeam2+alloc T wall ms | hisp T wall ms | hisp T device ms | "
      "**csrgeam2 / hisp T** |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
g = lambda x: "n/a" if x is None else "%.3f" % x
for m, p in cases:
    cells = []
    for op in "NT":
        gw, hw, hd = (med(m, p, op, "cusparse-geam-alloc-wall"), med(m, p, op, hs + "-wall"),
                      med(m, p, op, hs))
        cells += [g(gw), g(hw), g(hd), "**%s**" % (f(gw / hw) if gw and hw else "n/a")]
    print("| %s | %s | %s |" % (m, p, " | ".join(cells)))
for prec in sorted({p for _, p in cases}) + ["all"]:
    cs = [c for c in cases if prec in ("all", c[1])]
    out = []
    for op in "NT":
        pairs = [(med(m, p, op, "cusparse-geam-alloc-wall"), med(m, p, op, hs + "-wall"))
                 for m, p in cs]
        gm, n = gmean(pairs)
        slower = sum(1 for a, b in pairs if a and b and a < b)
        out.append("%s %s over %d, %d slower" % ("A+B" if op == "N" else "A^T+B^T", f(gm), n,
                                                 slower))
    print("\n%s: wall-clock geometric means, csrgeam2 with C's allocation / hisp (target >= 3, "
          "faster on every matrix): %s" % (prec, "; ".join(out)))
PY
    if [ -s "$sum.notes" ]; then
        echo >>"$sum"
        sort -u "$sum.notes" >>"$sum"
    fi
    rm -f "$sum.notes"
    if [ -f "$PLOT" ]; then
        python3 "$PLOT" "$csv" -o "$OUT" --prefix "add_gpu$sfx" --metric median_ms --log \
            --title "C = A + B" >>"$LOG" 2>&1 || echo "plot failed (see $LOG)"
        python3 "$PLOT" "$csv" -o "$OUT" --prefix "add_gpu$sfx" --metric bw_fraction \
            --title "C = A + B" >>"$LOG" 2>&1 || echo "plot failed (see $LOG)"
    fi
    echo
    cat "$sum"
done
grep -E "FAIL|warning" "$LOG" | sort | uniq -c | head -n 20
exit $status
