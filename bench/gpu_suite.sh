#!/bin/bash
# The GPU suite, run on the GPU machine from a folder holding bin/ tests/
# bench/ matrices/ and this script (see bench/README or the report):
#   bash gpu_suite.sh [full]       tests, sanitizers, CSR benchmark
#   bash gpu_suite.sh quick        CSR benchmark only (no tests, no sanitizers)
#   bash gpu_suite.sh hisparse     HiSparse: CUDA tests, memcheck and racecheck,
#                                  bench_hisparse_cuda (env HS_ARGS adds options,
#                                  MATRICES and PREC select)
#   bash gpu_suite.sh add          the addition benchmark, hisp_matrix_add vs
#                                  cuSPARSE csrgeam2 (add_gpu.sh, shipped next
#                                  to this script; its settings: MATRICES, PREC,
#                                  REPEAT, BACKENDS, ADD_ARGS)
# Writes its logs, the CSV/markdown results and a plot under $OUT (default
# ./out) and prints the summary table last.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
MODE=${1:-full}
export HISP_MATRICES=$PWD/matrices
LOG=$OUT/suite.log
SAN=$OUT/sanitizer.log
: >"$LOG"
say() { echo "== $*" | tee -a "$LOG"; }

say "machine"
{
    date -u
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,compute_mode --format=csv
    nproc
    ls -l /usr/local/cuda/lib64/libcusparse.so.12* 2>&1
} >>"$LOG" 2>&1
if ldd bench/bench_spmv_cuda | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
    echo "libcusparse from $d" >>"$LOG"
fi
ldd bench/bench_spmv_cuda | grep -iE "cusparse|opencl|not found" >>"$LOG" 2>&1
tail -n 12 "$LOG"

if [ "$MODE" = hisparse ]; then
    say "HiSparse tests on CUDA"
    HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_dev timeout 300 tests/check_hisp >"$OUT/tests_hs.log" 2>&1
    echo "exit $?" >>"$OUT/tests_hs.log"
    grep -E "Checks|exit|FAIL|Failure|Error|skipped" "$OUT/tests_hs.log" | tail -n 20 | tee -a "$LOG"
    say "compute-sanitizer on the HiSparse tests"
    : >"$SAN"
    echo "---- memcheck, device controller" >>"$SAN"
    HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_dev timeout 300 compute-sanitizer \
        --tool memcheck --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
    echo "exit $?" >>"$SAN"
    for tool in memcheck racecheck; do
        echo "---- $tool, host-polled controller (whole-program module, no device launches; scheduled and replayed calls)" >>"$SAN"
        HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_dev CK_RUN_CASE=hisparse_dev_host \
            timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
        echo "exit $?" >>"$SAN"
    done
    echo "---- racecheck, CSR SpMV suite" >>"$SAN"
    HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=spmv timeout 300 compute-sanitizer \
        --tool racecheck --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
    echo "exit $?" >>"$SAN"
    grep -E "^----|ERROR SUMMARY|RACECHECK SUMMARY|Checks|^exit|not supported" "$SAN" | tee -a "$LOG"
    say "HiSparse benchmark"
    : >"$OUT/bench_hs.log"
    PARTS=$(mktemp -d)
    for m in ${MATRICES:-poisson3d banded rmat dense blockdiag circuit}; do
        timeout ${BENCH_TIMEOUT:-300} bench/bench_hisparse_cuda --scale ${SCALE:-gpu} --matrices "$m" \
            --precision ${PREC:-both} --repeat 30 --warmup 5 --csv "$PARTS/$m.csv" \
            --summary "$PARTS/$m.sum" ${HS_ARGS:-} >>"$OUT/bench_hs.log" 2>&1
        echo "bench $m exit $?" >>"$OUT/bench_hs.log"
    done
    first=1
    for m in ${MATRICES:-poisson3d banded rmat dense blockdiag circuit}; do
        [ -f "$PARTS/$m.csv" ] || continue
        if [ $first = 1 ]; then
            cat "$PARTS/$m.csv" >"$OUT/bench_hs.csv"
            cat "$PARTS/$m.sum" >"$OUT/summary_hs.md"
            first=0
        else
            tail -n +2 "$PARTS/$m.csv" >>"$OUT/bench_hs.csv"
            tail -n +3 "$PARTS/$m.sum" >>"$OUT/summary_hs.md"
        fi
    done
    grep -E "exit|error|FAIL|scheduler" "$OUT/bench_hs.log" | sort | uniq -c | sort -rn | head -n 20
    python3 plot.py "$OUT/bench_hs.csv" -o "$OUT" --prefix hisparse_gpu --log >>"$LOG" 2>&1 || echo "plot failed" | tee -a "$LOG"
    echo
    cat "$OUT/summary_hs.md"
    exit 0
fi

if [ "$MODE" = add ]; then
    say "addition tests on every target (CUDA, NVIDIA OpenCL, PoCL)"
    CK_RUN_SUITE=hisparse_add timeout 300 tests/check_hisp >"$OUT/tests_add.log" 2>&1
    echo "exit $?" >>"$OUT/tests_add.log"
    grep -E "Checks|exit|Failure|Error|skipped" "$OUT/tests_add.log" | tail -n 12 | tee -a "$LOG"
    say "compute-sanitizer on the CUDA addition tests"
    : >"$SAN"
    echo "---- memcheck, HiSparse SpMV, device controller" >>"$SAN"
    HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_dev \
        timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
    echo "exit $?" >>"$SAN"
    for tool in memcheck racecheck; do
        echo "---- $tool" >>"$SAN"
        HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_add timeout 300 \
            compute-sanitizer --tool $tool --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
        echo "exit $?" >>"$SAN"
    done
    grep -E "^----|ERROR SUMMARY|RACECHECK SUMMARY|Checks|^exit" "$SAN" | tee -a "$LOG"
    say "addition benchmark (add_gpu.sh: hisp_matrix_add against csrgeam2)"
    s=add_gpu.sh
    [ -f "$s" ] || s=bench/add_gpu.sh
    OUT=$OUT bash "$s"
    rc=$?
    echo "add_gpu.sh exit $rc" | tee -a "$LOG"
    exit $rc
fi

if [ "$MODE" != quick ]; then
    say "hisp info and hisp demo (the README's main job)"
    { bin/hisp info; bin/hisp demo; } 2>&1 | tee -a "$LOG" | tail -n 8
    say "CUDA self-test (bench_spmv_cuda --selftest)"
    timeout 300 bench/bench_spmv_cuda --selftest 2>&1 | tee -a "$LOG" | tail -n 5

fi

say "benchmark"
PREC=${PREC:-both}
# one process per matrix, so that a slow or failing one keeps the others
PARTS=$(mktemp -d)
: >"$OUT/bench.log"
for m in ${MATRICES:-poisson3d banded rmat dense blockdiag circuit}; do
    timeout ${BENCH_TIMEOUT:-300} bench/bench_spmv_cuda --scale gpu --matrices "$m" --precision "$PREC" \
        --repeat 50 --warmup 5 --cpu-repeat 5 --csv "$PARTS/$m.csv" --md "$PARTS/$m.md" \
        --summary "$PARTS/$m.sum" ${BENCH_ARGS:-} >>"$OUT/bench.log" 2>&1
    echo "bench $m exit $?" >>"$OUT/bench.log"
done
first=1
for m in ${MATRICES:-poisson3d banded rmat dense blockdiag circuit}; do
    [ -f "$PARTS/$m.csv" ] || continue
    if [ $first = 1 ]; then
        cat "$PARTS/$m.csv" >"$OUT/bench.csv"
        cat "$PARTS/$m.md" >"$OUT/bench.md"
        cat "$PARTS/$m.sum" >"$OUT/summary.md"
        first=0
    else
        tail -n +2 "$PARTS/$m.csv" >>"$OUT/bench.csv"
        tail -n +3 "$PARTS/$m.md" >>"$OUT/bench.md"
        tail -n +3 "$PARTS/$m.sum" >>"$OUT/summary.md"
    fi
done
grep -vE "^\|" "$OUT/bench.log" >>"$LOG"

python3 - "$OUT" <<'PY' >>"$LOG" 2>&1
import csv, sys, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "bench.csv"))))
impls = ["hisp-cuda N", "cusparse-alg1 N", "cusparse-alg2 N", "hisp-cuda T", "hisp-cuda-atomic T", "cusparse T",
         "hisp-opencl-gpu N", "hisp-opencl-gpu T", "hisp-opencl-cpu N"]
precs = [p for p in ("f64", "f32") if any(r["precision"] == p for r in rows)]
fig, axes = plt.subplots(len(precs), 1, figsize=(13, 4.5 * len(precs)), squeeze=False)
for ax, p in zip(axes[:, 0], precs):
    mats = []
    for r in rows:
        if r["precision"] == p and r["matrix"] not in mats:
            mats.append(r["matrix"])
    w = 0.8 / len(impls)
    for k, name in enumerate(impls):
        impl, op = name.rsplit(" ", 1)
        vals = []
        for m in mats:
            v = [float(r["gbs"]) for r in rows
                 if r["matrix"] == m and r["precision"] == p and r["impl"] == impl and r["op"] == op]
            vals.append(v[0] if v else 0)
        ax.bar([i + k * w for i in range(len(mats))], vals, w, label=name)
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(mats))])
    ax.set_xticklabels(mats)
    ax.set_ylabel("GB/s (byte model)")
    ax.set_title("CSR SpMV on the H100, %s" % p)
    ax.legend(fontsize=7, ncol=4)
fig.tight_layout()
fig.savefig(os.path.join(out, "spmv_gpu.png"), dpi=110)
print("plot written")
PY

if [ "$MODE" = full ]; then
    say "test suite (every target)"
    timeout ${TEST_TIMEOUT:-300} tests/check_hisp >"$OUT/tests.log" 2>&1
    echo "check_hisp exit $?" >>"$OUT/tests.log"
    grep -E "skipped|Skipped|Checks|exit|FAIL|Failure|Error" "$OUT/tests.log" | tail -n 20 | tee -a "$LOG"

    say "compute-sanitizer (CUDA SpMV tests and self-test)"
    : >"$SAN"
    echo "---- memcheck, HiSparse SpMV, device controller" >>"$SAN"
    HISP_TEST_QUICK=1 HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=hisparse_dev \
        timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
    echo "exit $?" >>"$SAN"
    for tool in memcheck racecheck; do
        echo "---- $tool: check_hisp spmv suite, CUDA targets" >>"$SAN"
        HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=spmv timeout ${SAN_TIMEOUT:-200} compute-sanitizer --tool $tool \
            --error-exitcode 9 tests/check_hisp >>"$SAN" 2>&1
        echo "exit $?" >>"$SAN"
        echo "---- $tool: bench_spmv_cuda --selftest" >>"$SAN"
        timeout ${SAN_TIMEOUT:-200} compute-sanitizer --tool $tool --error-exitcode 9 \
            bench/bench_spmv_cuda --selftest >>"$SAN" 2>&1
        echo "exit $?" >>"$SAN"
    done
    grep -E "^----|ERROR SUMMARY|RACECHECK SUMMARY|Checks|^exit|selftest" "$SAN" | tee -a "$LOG"
fi


echo
cat "$OUT/summary.md" 2>/dev/null || tail -n 30 "$OUT/bench.log"
