#!/bin/sh
# CPU benchmark suite: CSR SpMV with hisp's OpenCL backend (PoCL) against a
# serial C loop, OpenMP C loops and the hisp reference backend; then the plots.
#
#   bench/cpu_suite.sh [--scale small|medium] [--wait-idle SECONDS] [other bench_spmv_cpu options]
#
# Writes bench/results/cpu-<UTC date>.{csv,json,md} and the PNGs beside them.
# --wait-idle N waits up to N s for the 1-minute load average to drop below 0.5
# first (default 0: do not wait): other work on a 2-core machine skews every number.
set -eu
cd "$(dirname "$0")/.."

wait_idle=0
args=""
while [ $# -gt 0 ]; do
    case "$1" in
    --wait-idle) wait_idle="$2"; shift 2 ;;
    --help|-h) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args="$args $1"; shift ;;
    esac
done

scons -Q cuda=no build/bench/bench_spmv_cpu >/dev/null  # incremental

if [ "$wait_idle" -gt 0 ]; then
    end=$(( $(date +%s) + wait_idle ))
    while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        if awk "BEGIN{exit !($load < 0.5)}"; then break; fi
        if [ "$(date +%s)" -ge "$end" ]; then echo "load average still $load; running anyway"; break; fi
        sleep 5
    done
fi

stamp=$(date -u +%Y-%m-%d-%H%M)
out=bench/results
mkdir -p "$out"
base="$out/cpu-$stamp"
# shellcheck disable=SC2086
rc=0
./build/bench/bench_spmv_cpu $args --csv "$base.csv" --json "$base.json" --md "$base.md" || rc=$?
echo "results: $base.csv $base.json $base.md"

# matplotlib: the first python3 that has it (pyenv shims may hide Debian's).
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
{
    echo
    echo "### Machine"
    echo
    lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|L2|L3|Hypervisor)' | sed 's/^/    /'
    echo "    $(grep MemTotal /proc/meminfo)"
    echo "    $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r), $(gcc --version | head -1)"
    echo "    PoCL: $(dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo '?')"
} >>"$base.md"
if [ -n "$py" ]; then
    "$py" bench/plot.py "$base.csv" -o "$out" --prefix "cpu-$stamp" >"$base.plots"
    cat "$base.plots"
    { echo; echo "### Plots"; echo; sed 's/^/- /' "$base.plots"; } >>"$base.md"
    rm -f "$base.plots"
else
    echo "no plots: matplotlib is missing (Debian: apt-get install -y python3-matplotlib; then"
    echo "  python3 bench/plot.py $base.csv -o $out --prefix cpu-$stamp)"
fi
exit $rc
