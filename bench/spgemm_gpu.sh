#!/bin/bash
# SpGEMM on the GPU machine: the spgemm suite of check_hisp on CUDA (and the
# CLI suites that run products), then bench_spgemm_cuda (hisp against
# cuSPARSE ALG1/2/3 in one process) and spgemm_cupy.py (CuPy's A @ B) on the
# same items: A*A of poisson3d 100^3, banded, rmat 18 (edge factor 16),
# circuit and the larger files of ../shared/matrices; A*A^T of rmat 18 and
# CA-HepPh; P^T*A*P with a smoothed-aggregation P of poisson3d 100^3
# (spgemm_inputs.py). Stage with `bash bench/stage_gpu.sh spgemm`; on the
# device `OUT=$OUT bash .gpu/spgemm_gpu.sh [tests] [bench] [f32]` (default
# tests bench; REPEAT=N timed calls per product, default 5). Writes
# $OUT/spgemm.log, $OUT/spgemm_*.md and .json (CuPy first, rmat 18 last).
set -u
H=$(cd "$(dirname "$0")" && pwd)
export HISP_MATRICES=$H/matrices HISP_OPTIONS="cache_dir=$OUT/cache"
parts=${*:-tests bench}
L=$OUT/spgemm.log
I=$OUT/in
mkdir -p "$I"
{ date -u; nvidia-smi -L; } >>"$L" 2>&1
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
if has tests; then
  for s in spgemm cli cli_bench; do
    echo "== check_hisp $s (cuda)" >>"$L"
    timeout 400 env HISP_TEST_BACKENDS=cuda CK_RUN_SUITE=$s "$H/tests/check_hisp" >>"$L" 2>&1
    echo "-- exit $?" >>"$L"
  done
fi
if has bench; then
  g() { [ -f "$I/$1.mtx" ] || "$H/bin/hisp" gen "${@:2}" -o "$I/$1.mtx" >>"$L" 2>&1; }
  g poisson3d_100 poisson3d --n 100
  g banded banded --n 2000000 --bandwidth 8 --seed 42
  g rmat18 rmat --scale 18 --edge-factor 16 --seed 42
  g circuit circuit --n 20000 --seed 42
  [ -f "$I/P.mtx" ] || python3 "$H/spgemm_inputs.py" "$I/poisson3d_100.mtx" 100 "$I/P.mtx" >>"$L" 2>&1
  M=$H/matrices
  ITEMS="$I/poisson3d_100.mtx,$I/banded.mtx,$I/circuit.mtx"
  for f in CA-HepPh bcsstk33 ca-CondMat luxembourg bayer10 fidapex6; do ITEMS="$ITEMS,$M/$f.mtx"; done
  ITEMS="$ITEMS,aat:$M/CA-HepPh.mtx,ptap:$I/P.mtx:$I/poisson3d_100.mtx"
  ITEMS="$ITEMS,$I/rmat18.mtx,aat:$I/rmat18.mtx"
  R=${REPEAT:-5}
  for p in f64 $(has f32 && echo f32); do
    echo "== spgemm_cupy.py $p" >>"$L"
    timeout 300 python3 "$H/spgemm_cupy.py" --items "$ITEMS" --precision $p --repeat $R \
      --json "$OUT/spgemm_cupy_$p.json" >"$OUT/spgemm_cupy_$p.md" 2>>"$L"
    echo "-- exit $?" >>"$L"
    echo "== bench_spgemm_cuda $p" >>"$L"
    timeout 500 "$H/bench/bench_spgemm_cuda" --items "$ITEMS" --precision $p --repeat $R \
      --json "$OUT/spgemm_cuda_$p.json" >"$OUT/spgemm_cuda_$p.md" 2>>"$L"
    echo "-- exit $?" >>"$L"
  done
fi
rm -rf "$I" "$OUT/cache"
