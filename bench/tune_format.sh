#!/bin/sh
# When each format wins: `hisp tune --no-cache --json` (hisp's CSR kernel,
# HiSparse and the compound search's leaders timed side by side: wall time
# per call with a synchronize, median of 15 interleaved rounds) on a few
# real matrices, for y = A*x and y = A^T*x, on one backend and device.
#
#   bench/tune_format.sh BACKEND [DEVICE] [OUTDIR]
#
# BACKEND: opencl, cuda or reference; DEVICE: index within it (default 0);
# OUTDIR: default bench/results/tune-<backend>-<UTC date>. Writes per matrix
# and op the JSON of hisp tune (.json) and its progress lines (.log), then
# summary.md (python3 stdlib) and machine.txt. Matrices from ../shared/matrices
# (HISP_MATRICES overrides, as for the tests). Build first: ./hisp.sh build.
# On the GPU machine: build with cuda=yes, `bash bench/stage_gpu.sh tune`, carry
# .gpu, then `bash .gpu/tune_format.sh cuda 0 $OUT/tune-cuda` (and `opencl 0` for
# NVIDIA's OpenCL); the staged hisp and matrices are used when build/ and
# ../shared are absent.
set -eu
cd "$(dirname "$0")/.."

backend="${1:?usage: bench/tune_format.sh BACKEND [DEVICE] [OUTDIR]}"
device="${2:-0}"
out="${3:-bench/results/tune-$backend-$(date -u +%Y-%m-%d)}"
mats="${HISP_MATRICES:-../shared/matrices}"
[ -d "$mats" ] || mats=.gpu/matrices # staged by bench/stage_gpu.sh tune
hisp=build/bin/hisp
[ -x "$hisp" ] || hisp=.gpu/bin/hisp
[ -x "$hisp" ] || { echo "build first: ./hisp.sh build (or bench/stage_gpu.sh tune)" >&2; exit 1; }
mkdir -p "$out"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# matrix file, entry type; real files run y = A x and y = A^T x
set -- bcsstk33 f64  CA-HepPh f64  luxembourg f64  Groebner_id2003_aug f64  bayer10 f64 \
       fidapex6 f64  rajat01 f64  cage8 f64  bcsstk33 f32  young1c c64  mhd1280b c64
while [ $# -ge 2 ]; do
    m=$1 t=$2
    shift 2
    f="$mats/$m.mtx"
    [ -f "$f" ] || { echo "skipped: $f is missing" >&2; continue; }
    ops="N"
    case $t in f32|f64) ops="N T" ;; esac
    for op in $ops; do
        tr=""
        [ "$op" = T ] && tr="--transpose"
        name="$m-$t-$op"
        echo "tune $name on $backend $device" >&2
        # shellcheck disable=SC2086
        if ! "$hisp" tune "$f" --entry "$t" $tr --backend "$backend" --device "$device" \
            --no-cache --json >"$out/$name.json" 2>"$out/$name.log"; then
            echo "failed: $name (see $out/$name.log)" >&2
        fi
    done
done

{
    "$hisp" info 2>/dev/null | head -40 || true
    echo
    lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' || true
    grep MemTotal /proc/meminfo || true
    echo "load average at start: $load0, at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L || true
} >"$out/machine.txt"

python3 - "$out" <<'EOF'
import glob, json, math, os, sys
out = sys.argv[1]
rows = []
for p in sorted(glob.glob(os.path.join(out, "*.json"))):
    try:
        d = json.load(open(p))
    except ValueError:
        continue
    f = {r["format"] if r["format"] != "variant" else "variant": r for r in reversed(d["formats"])}
    var = [r for r in d["formats"] if r["format"] == "variant"]
    def ms(r):
        return "%.4f" % r["ms"] if r and r.get("ms") is not None else "-"
    b = d["best"]
    chosen = b["format"] if b["format"] != "variant" else "%s %s" % (b["layout"], b["schedule"])
    hs = f.get("hisparse")
    v = var[0] if var else None
    rows.append("| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %.2f | %.1f |" % (
        os.path.basename(d["file"]).replace(".mtx", ""), d["type"], "A^T x" if d["transpose"] else "A x",
        d["rows"], d["nnz"], ms(f.get("csr")),
        ms(hs) + (" (first %.2f)" % hs["first_ms"] if hs else ""),
        ms(v) + (" %s %s" % (v["layout"], v["schedule"]) if v else ""),
        chosen, ms(b), b["csr_ms"] / b["ms"] if b["ms"] else float("nan"), d["tune_ms"] / 1e3))
dev = ""
if rows:
    d = json.load(open(sorted(glob.glob(os.path.join(out, "*.json")))[0]))
    dev = "%s: %s" % (d["backend"], d["device"]["name"])
with open(os.path.join(out, "summary.md"), "w") as s:
    s.write("Device %s. ms = wall time per call with a synchronize, median of 15 interleaved\n" % dev)
    s.write("rounds (hisp tune --no-cache); HiSparse's first call schedules (first = that call);\n")
    s.write("fastest variant = of the compound search's three leaders timed here like the others;\n")
    s.write("chosen = CSR unless another is at least 3 % faster.\n\n")
    s.write("| matrix | type | op | rows | nnz | CSR ms | HiSparse ms | fastest variant ms | chosen | chosen ms | speed-up vs CSR | choice s |\n")
    s.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    s.write("\n".join(rows) + "\n")
print(open(os.path.join(out, "summary.md")).read())
EOF
