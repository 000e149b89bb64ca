#!/bin/sh
# HiSparse SpMV / SpMV^T against hisp's own CSR SpMV on the OpenCL backend of
# this machine (PoCL on the CI VM), on the generated suite at CPU sizes, f32
# and f64, op N and T; then the plots.
#
#   bench/hisparse_cpu_suite.sh [--repeat N] [--runs K] [--wait-idle SECONDS]
#                               [--matrices a,b,...] [--precisions f32,f64] [--ops N,T]
#                               [--no-build] [--baseline HISP_BINARY]
#
# Each (matrix, precision, op) runs `hisp spmv --repeat N` (3 warm-up runs,
# median of N) K times with CSR and HiSparse alternating, and reports the
# median of the K medians (default N = 20, K = 3): other work on a 2-core
# machine moves single runs by up to 2x. --wait-idle S waits up to S s
# before each matrix for the 1-minute load average to drop below 0.5.
# --baseline runs another build's hisp (e.g. an older commit) on the same
# files in the same alternation, as a third column (before/after under the
# same machine conditions). HiSparse rows are as a user calls it: the first
# call (a warm-up) is scheduled, later calls replay its leaf queues; the
# scheduler counts are the first call's.
# Matrices are generated once into $HISP_BENCH_DIR (default
# /tmp/hisp-bench-mtx) as .hisp files (node size 128).
# Writes bench/results/hisparse-cpu-<UTC date>.{csv,md} and the PNGs beside them.
set -eu
cd "$(dirname "$0")/.."

repeat=20
runs=3
wait_idle=0
build=1
baseline=""
matrices="poisson3d,banded,rmat,dense,circuit,blockdiag"
precisions="f32,f64"
ops="N,T"
while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --wait-idle) wait_idle="$2"; shift 2 ;;
    --matrices) matrices="$2"; shift 2 ;;
    --precisions) precisions="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --baseline) baseline="$2"; shift 2 ;;
    --help|-h) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
    esac
done

[ "$build" = 0 ] || scons -Q build/bin/hisp >/dev/null # incremental
hisp=./build/bin/hisp
dir=${HISP_BENCH_DIR:-/tmp/hisp-bench-mtx}
mkdir -p "$dir"

# gen arguments per suite matrix (CPU-friendly sizes)
gen_args() {
    case "$1" in
    poisson3d) echo "poisson3d --n 60" ;;
    banded) echo "banded --n 200000" ;;
    rmat) echo "rmat --scale 16" ;;
    dense) echo "dense --n 1000" ;;
    circuit) echo "circuit --n 200000" ;;
    blockdiag) echo "blockdiag --n 200000" ;;
    *) echo "unknown suite matrix $1" >&2; exit 1 ;;
    esac
}
for m in $(echo "$matrices" | tr ',' ' '); do
    for p in $(echo "$precisions" | tr ',' ' '); do
        f="$dir/$m-$p.hisp"
        [ -s "$f" ] && continue
        # shellcheck disable=SC2046
        "$hisp" gen $(gen_args "$m") --precision "$p" -o "$dir/$m.mtx" >/dev/null
        "$hisp" convert "$dir/$m.mtx" -o "$f" --precision "$p" >/dev/null
        rm -f "$dir/$m.mtx"
    done
done

stamp=$(date -u +%Y-%m-%d-%H%M)
out=bench/results
mkdir -p "$out"
base="$out/hisparse-cpu-$stamp"

HISP=$hisp BASELINE=$baseline DIR=$dir REPEAT=$repeat RUNS=$runs WAIT=$wait_idle MATRICES=$matrices \
PRECISIONS=$precisions OPS=$ops BASE=$base python3 - <<'EOF'
import csv, json, os, statistics, subprocess, sys, time

env = os.environ
hisp, d, base = env['HISP'], env['DIR'], env['BASE']
baseline = env.get('BASELINE', '')
fmts = ('csr', 'hisparse', 'baseline') if baseline else ('csr', 'hisparse')
repeat, runs, wait = int(env['REPEAT']), int(env['RUNS']), int(env['WAIT'])
mats = env['MATRICES'].split(',')
precs = env['PRECISIONS'].split(',')
ops = env['OPS'].split(',')

def load():
    return float(open('/proc/loadavg').read().split()[0])

def wait_idle():
    end = time.time() + wait
    while wait > 0 and load() >= 0.5 and time.time() < end:
        time.sleep(5)

def run(path, fmt, op):
    prog = baseline if fmt == 'baseline' else hisp
    cmd = [prog, 'spmv', path, '--format', 'csr' if fmt == 'csr' else 'hisparse', '--backend',
           'opencl', '--repeat', str(repeat), '--check', '--json']
    if op == 'T':
        cmd.append('--transpose')
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit('%s failed (exit %d):\n%s%s' % (' '.join(cmd), p.returncode, p.stdout, p.stderr))
    return json.loads(p.stdout)

rows, table = [], []
loads = []
for m in mats:
    wait_idle()
    for prec in precs:
        path = '%s/%s-%s.hisp' % (d, m, prec)
        for op in ops:
            med = {f: [] for f in fmts}
            mins = {f: [] for f in fmts}
            last = {}
            for _ in range(runs):
                loads.append(load())
                for fmt in fmts:
                    j = run(path, fmt, op)
                    med[fmt].append(j['timing']['median_ms'])
                    mins[fmt].append(j['timing']['min_ms'])
                    last[fmt] = j
            res = {}
            for fmt in fmts:
                j = last[fmt]
                t = statistics.median(med[fmt])
                nnz = j['nnz']
                res[fmt] = t
                rows.append({'matrix': m, 'precision': prec, 'op': op,
                             'impl': 'hisp-opencl-' + {'baseline': 'hisparse-baseline'}.get(fmt, fmt),
                             'device': j['device']['name'],
                             'rows': j['rows'], 'cols': j['cols'], 'nnz': nnz,
                             'median_ms': '%.4f' % t, 'min_ms': '%.4f' % min(mins[fmt]),
                             'gflops': '%.4f' % (2 * nnz / t / 1e6), 'gbs': '', 'bw_fraction': '',
                             'rel_error': j.get('check', {}).get('rel_error', '')})
            s = last['hisparse']['scheduler']
            spread = '%.2f-%.2f' % (min(med['hisparse']), max(med['hisparse']))
            bl = res.get('baseline')
            table.append((m, last['csr']['rows'], last['csr']['nnz'], prec, op, res['csr'],
                          '%.3f' % bl if bl else '-', '%.2f' % (bl / res['csr']) if bl else '-',
                          res['hisparse'], spread, res['hisparse'] / res['csr'],
                          '%d / %d / %d' % (s['rounds'], s['launches'], s['nodes'])))
            print('%-10s %s %s  csr %.3f ms  %shisparse %.3f ms (runs %s)  ratio %.2f' %
                  (m, prec, op, res['csr'], 'baseline %.3f ms  ' % bl if bl else '',
                   res['hisparse'], spread, res['hisparse'] / res['csr']), flush=True)

with open(base + '.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=['matrix', 'precision', 'op', 'impl', 'device', 'rows',
                                      'cols', 'nnz', 'median_ms', 'min_ms', 'gflops', 'gbs',
                                      'bw_fraction', 'rel_error'])
    w.writeheader()
    w.writerows(rows)
with open(base + '.md', 'w') as f:
    f.write('# HiSparse vs CSR SpMV on OpenCL (%s)\n\n' % rows[0]['device'])
    f.write('`bench/hisparse_cpu_suite.sh --repeat %d --runs %d`: median of %d runs of '
            '`hisp spmv FILE.hisp --backend opencl --format csr|hisparse [--transpose] --repeat %d '
            '--check` (CSR and HiSparse alternating), node size 128. HiSparse times: host clock '
            'around each call (rounds, launches, final read included); CSR: marker events. '
            '1-minute load average during the runs: %.2f-%.2f.\n\n' %
            (repeat, runs, runs, repeat, min(loads), max(loads)))
    if baseline:
        f.write('Baseline: `%s` (same files, same alternation).\n\n' % baseline)
    f.write('| matrix | rows | nnz | type | op | CSR ms | baseline HiSparse ms | baseline ratio | '
            'HiSparse ms | HiSparse runs | ratio | scheduled rounds / launches / nodes |\n'
            '|---|---:|---:|---|---|---:|---:|---:|---:|---|---:|---|\n')
    for t in table:
        f.write('| %s | %d | %d | %s | %s | %.3f | %s | %s | %.3f | %s | %.2f | %s |\n'
                % t)
print('results: %s.csv %s.md' % (base, base))
EOF

{
    echo
    echo "### Machine"
    echo
    lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|L2|L3|Hypervisor)' | sed 's/^/    /'
    echo "    $(grep MemTotal /proc/meminfo)"
    echo "    $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r), $(gcc --version | head -1)"
    echo "    PoCL: $(dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo '?')"
} >>"$base.md"
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
    "$py" bench/plot.py "$base.csv" -o "$out" --prefix "hisparse-cpu-$stamp" \
        --title "HiSparse vs CSR SpMV" >"$base.plots"
    cat "$base.plots"
    { echo; echo "### Plots"; echo; sed 's/^/- /' "$base.plots"; } >>"$base.md"
    rm -f "$base.plots"
else
    echo "no plots: matplotlib is missing (Debian: apt-get install -y python3-matplotlib)"
fi
cat "$base.md"
