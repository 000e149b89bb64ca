#!/bin/bash
# MSREP on machines with 2 and 4 NVIDIA GPUs (issue 7): bench_msrep_cuda over
# rmat (power law) and poisson3d (regular), f64, in pieces of one matrix each
# (every kind and variant on 1, 2, 4 GPUs, so the matrix is made once per
# piece), each piece one command well under 10 minutes.
#
#   bash bench/msrep_suite.sh list          the pieces, numbered, with the expected time
#   bash bench/msrep_suite.sh run K [K..]   run pieces K..
#   bash bench/msrep_suite.sh plan4         pieces 0-3 + table (4 GPUs, ~8-9 min in all: over
#                                           a 10-minute command limit, run the pieces one by one)
#   bash bench/msrep_suite.sh plan2         pieces 0-2 + table (2 GPUs, ~4-5 min in all)
#   bash bench/msrep_suite.sh table         the final table from every piece's CSV
#   bash bench/msrep_suite.sh plot          speedup plots (bench/plot_msrep.py) from those CSVs
#   bash bench/msrep_suite.sh selftest      the whole flow at tiny sizes on PoCL or the
#                                           reference backend (machines without a GPU)
#
# Device-time budget: about 10 minutes in total on 4 x H200 (plan4, one
# command per piece: run 0, run 1, run 2, run 3) and 5 minutes on 2 x H200
# (plan2). Expected time per piece on 4 GPUs (2 GPUs: about 2/3 of it, one
# GPU count fewer), estimated from this code's steps, NOT measured yet:
#   0 rmat 5e8       ~1.5-2 min: generation ~20 s (hisp's generator: edge sampling
#                    and row sorts on 16 threads, the bucketing pass single-threaded),
#                    CSC copy for pcsc ~5 s (OpenMP), 1-GPU yardstick ~6 s (copy +
#                    upload of 6 GB), 36 plans (4 kinds x 3 GPU counts x 3 plans:
#                    hisp, cuSPARSE, cuSPARSE + p*-opt) ~35 s of partition +
#                    distribution (6 GB over PCIe per plan, split over the GPUs;
#                    pcoo expands its row indices once per plan), timed calls ~20 s
#                    (the host variant sends x and gathers y over PCIe: ~50-80 ms
#                    per call x 13 calls per configuration), CUDA/cuSPARSE setup ~10 s.
#                    Measured on the 2-core CI VM for scale: rmat 5.3e8 generation 52 s
#                    (2 threads), rmat 3.2e7 generation 1.6 s and CSC copy 1.3 s
#   1 poisson3d 5e8  ~1-1.5 min: generation ~2 s (row-parallel), 2 plans per
#                    configuration (no cuSPARSE without p*-opt), 71M rows
#   2 rmat 1e9       ~3 min: twice piece 0's data, 2 plans per configuration
#   3 poisson3d 1e9  ~2.5 min: 143M rows (y of 1.1 GB gathered per host-variant
#                    call; x only as each part's column window, a band for the
#                    stencil), 2 plans per configuration
#   4 rmat 2e9       optional, NOT in plan4: ~6-8 min (generation ~90 s, 24 GB per
#                    plan; cuSPARSE only on 2 and 4 GPUs: parts over 2^31-1 nonzeros
#                    need 64-bit indices, which the cuSPARSE path does not do)
#   5 poisson3d 4e9  optional: 571M rows, CSR 52 GB (fits one 80 GB GPU with x and y);
#                    run it with KINDS=rowblock,pcsr VARIANTS=dist (~4-5 min)
#   6 rmat 4e9       optional: generation ~5 min (rmat 2e9 took 135 s on the H200 host);
#                    run it alone with KINDS=rowblock,pcsr VARIANTS=dist (~9-10 min)
# Run the pieces as separate commands (each under timeout 590 s); if the
# first piece takes much longer than estimated, skip piece 3 (or 2) to stay
# in budget: the table works with any subset.
#
# Environment: BIN (default build/bench/bench_msrep_cuda), OUT (default
# bench/out/msrep), GPUS (default 1,2,4,8 capped at the GPUs nvidia-smi lists),
# REPEAT (default 10), BACKEND (default cuda; selftest uses opencl if PoCL
# answers, else reference), KINDS and VARIANTS (a subset of each piece's, e.g.
# VARIANTS=resident,dist for a shorter run). Host memory: about 3x the CSR size (A, its CSC
# copy, the yardstick's copy): 1e9 f64 needs ~40 GB, 2e9 ~80 GB.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build/bench/bench_msrep_cuda}
OUT=${OUT:-bench/out/msrep}
REPEAT=${REPEAT:-10}
BACKEND=${BACKEND:-cuda}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -z "${GPUS:-}" ]; then
    GPUS=1
    [ "$ngpu" -ge 2 ] && GPUS=1,2
    [ "$ngpu" -ge 4 ] && GPUS=1,2,4
    [ "$ngpu" -ge 8 ] && GPUS=1,2,4,8
fi
# the same libcusparse fallback as gpu_suite.sh (the binary links it dynamically)
if ldd "$BIN" 2>/dev/null | grep -q "not found"; then
    d=$(python3 -c 'import nvidia.cusparse, os; print(os.path.dirname(nvidia.cusparse.__file__))' 2>/dev/null)/lib
    export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
fi
KINDS=${KINDS:-rowblock,pcsr,pcsc,pcoo}
ALLV=host,resident,cusparse,cusparse-pptr,dist,dist-fit
OPTV=host,resident,cusparse-pptr,dist,dist-fit
if [ -n "${VARIANTS:-}" ]; then ALLV=$VARIANTS OPTV=$VARIANTS; fi
# matrix nnz variants expected-minutes
pieces=(
    "rmat 5e8 $ALLV 2"
    "poisson3d 5e8 $OPTV 1.5"
    "rmat 1e9 $OPTV 3"
    "poisson3d 1e9 $OPTV 2.5"
    "rmat 2e9 $OPTV 8"
    "poisson3d 4e9 $OPTV 5"
    "rmat 4e9 $OPTV 10"
)

run_piece() {
    local k=$1 m s vars est
    read -r m s vars est <<<"${pieces[$k]}"
    local base="$OUT/$m-$s"
    mkdir -p "$OUT"
    echo "== piece $k: $m nnz $s variants $vars GPUs $GPUS backend $BACKEND (expected ~$est min; $(date -u +%T) UTC)"
    local t0=$SECONDS
    timeout 590 "$BIN" --backend "$BACKEND" --matrix "$m" --nnz "$s" --gpus "$GPUS" \
        --kinds "$KINDS" --variants "$vars" --repeat "$REPEAT" \
        --csv "$base.csv" --md "$base.md" 2>&1 | tee "$base.log"
    local rc=${PIPESTATUS[0]}
    [ -f "$base.md" ] && cat "$base.md"
    echo "== piece $k exit status $rc after $((SECONDS - t0)) s (expected ~$est min)"
    return "$rc"
}

# The final table: per matrix, variant and kind, the per-SpMV time on each
# GPU count with the speedup over 1 GPU (same kind and variant) and over the
# row-block split (same variant and GPUs), then the breakdown at the largest
# GPU count.
table() {
    local files=("$OUT"/*.csv)
    [ -f "${files[0]}" ] || { echo "no results under $OUT"; return 1; }
    echo "# MSREP, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x $ngpu ($BACKEND), $(date -u +%F)"
    echo
    echo "per SpMV: median of $REPEAT calls; speedup = same kind+variant on 1 GPU / this; vs rowblock = rowblock (same variant, GPUs) / this;"
    echo "host = x, y on the host + host merge; resident = x, y on GPU 0 + device merge; cusparse(-pptr) = cuSPARSE per GPU, resident (+ p*-opt)"
    echo "speedup w/o x = (call - x) on 1 GPU / (call - x): x already on every device (a solver keeping x replicated)"
    echo
    awk -F, '
    FNR == 1 { next }
    {
        key = $1 " " $2 " " $5 " " $4; g = $6 + 0
        if (!(key in seen)) { seen[key] = 1; order[n++] = key; mat[key] = $1; nz[key] = $2; var[key] = $5; kind[key] = $4 }
        call[key, g] = $10; kern[key, g] = $12; part[key, g] = $8; dist[key, g] = $9
        xm[key, g] = $11; gat[key, g] = $13; mer[key, g] = $14; vs[key, g] = $21; err[key, g] = $23; nox[key, g] = $24
        has[g] = 1; rb[$1 " " $2 " " $5, g] = ($4 == "rowblock") ? $10 : rb[$1 " " $2 " " $5, g]
        if ($4 == "rowblock") rbset[$1 " " $2 " " $5, g] = 1
    }
    END {
        ng = 0
        for (g = 1; g <= 64; g++) if (g in has) gl[ng++] = g
        gmax = gl[ng - 1]
        printf "| matrix | nnz | variant | kind |"
        for (i = 0; i < ng; i++) printf " %d GPU ms (speedup, vs rowblock) |", gl[i]
        printf " at %d GPUs: partition ms | distribution ms | x ms | kernel ms (slowest) | kernel speedup | gather ms | merge ms | speedup w/o x | vs 1-GPU hisp_spmv | rel err |\n", gmax
        printf "|---|---|---|---|"
        for (i = 0; i < ng; i++) printf "---|"
        printf "---|---|---|---|---|---|---|---|---|---|\n"
        for (j = 0; j < n; j++) {
            k = order[j]; vk = mat[k] " " nz[k] " " var[k]
            printf "| %s | %s | %s | %s |", mat[k], nz[k], var[k], kind[k]
            for (i = 0; i < ng; i++) {
                g = gl[i]
                if ((k, g) in call) {
                    sp = ((k, 1) in call) ? sprintf("%.2fx", call[k, 1] / call[k, g]) : "-"
                    vr = ((vk, g) in rbset) ? sprintf("%.2fx", rb[vk, g] / call[k, g]) : "-"
                    printf " %.3f (%s, %s) |", call[k, g], sp, vr
                } else printf " - |"
            }
            g = gmax
            if ((k, g) in call) {
                ks = ((k, 1) in kern) ? sprintf("%.2fx", kern[k, 1] / kern[k, g]) : "-"
                printf " %.1f | %.1f | %.3f | %.4f | %s | %.3f | %.3f | %.2fx | %.2fx | %s |\n", part[k, g], dist[k, g], xm[k, g], kern[k, g], ks, gat[k, g], mer[k, g], nox[k, g], vs[k, g], err[k, g]
            } else printf " - | - | - | - | - | - | - | - | - | - |\n"
        }
    }' "${files[@]}"
}

cmd=${1:-list}
shift || true
case "$cmd" in
list)
    echo "machine: $ngpu GPU(s), GPUS=$GPUS, backend $BACKEND, binary $BIN"
    for k in "${!pieces[@]}"; do
        read -r m s vars est <<<"${pieces[$k]}"
        echo "$k: $m nnz $s f64, kinds $KINDS, variants $vars, expected ~$est min$([ "$k" -ge 4 ] && echo ' (optional)')"
    done
    echo "plan4 = run 0 1 2 3 (~9 min on 4 GPUs); plan2 = run 0 1 2 (~5 min on 2 GPUs)"
    ;;
run)
    st=0
    for k in "$@"; do run_piece "$k" || st=$?; done
    exit $st
    ;;
plan4)
    st=0
    for k in 0 1 2 3; do run_piece "$k" || st=$?; done
    table >"$OUT/msrep-summary.md"
    cat "$OUT/msrep-summary.md"
    exit $st
    ;;
plan2)
    st=0
    for k in 0 1 2; do run_piece "$k" || st=$?; done
    table >"$OUT/msrep-summary.md"
    cat "$OUT/msrep-summary.md"
    exit $st
    ;;
table)
    table >"$OUT/msrep-summary.md"
    cat "$OUT/msrep-summary.md"
    ;;
plot)
    py=python3
    $py -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3 # Debian's matplotlib
    $py "$(dirname "$0")/plot_msrep.py" "$OUT"/*.csv -o "$OUT"
    ;;
selftest)
    # The same pieces at tiny sizes on a backend of this machine: checks the
    # bench's flow, the CSV and the table (not performance).
    export OUT=${OUT%/}/selftest
    rm -rf "$OUT"
    if [ "$BACKEND" = cuda ]; then
        BACKEND=reference
        "$BIN" --backend opencl --matrix poisson3d --nnz 1e3 --kinds none --gpus 1 \
            --repeat 1 >/dev/null 2>&1 && BACKEND=opencl
    fi
    export BACKEND GPUS=1,2,4 REPEAT=3
    pieces=("rmat 2e5 $ALLV 0" "poisson3d 2e5 $OPTV 0")
    st=0
    for k in 0 1; do run_piece "$k" >/dev/null || st=$?; done
    table | tee "$OUT/msrep-summary.md"
    rows=$(grep -c '^| rmat\|^| poisson3d' "$OUT/msrep-summary.md")
    echo "selftest: backend $BACKEND, $rows table rows, exit status $st"
    [ "$st" -eq 0 ] && [ "$rows" -ge 8 ]
    ;;
*)
    sed -n '2,45p' "$0"
    exit 1
    ;;
esac
