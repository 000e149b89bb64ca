#!/bin/bash
# AMG-preconditioned CG on the GPU machine against Jacobi-CG: `hisp solve
# gen:KIND:N --method cg --precond amg|jacobi --backend cuda --json` to rtol
# 1e-8, b = ones, on poisson3d, aniso3d and jump3d grids (SIDES, default
# "64 128"; KINDS, default all three; PRECONDS, default "amg jacobi", may
# add amg1: AMG aggregating single rows, --amg-block 1, for the elasticity
# matrix elastic3d, whose 3x3 blocks AMG aggregates as nodes of 3 by
# default); then, on the REUSE side (default
# none), 5 solves of each with --solves 5 (AMG's hierarchy set up once, and
# set up again by hisp_preconditioner_update before each later solve: --update).
# Stage with `bash bench/stage_gpu.sh amg`; on the device `OUT=$OUT bash
# .gpu/amg_gpu.sh`. Writes one JSON per solve to $OUT/amg/ (the --solves
# runs to $OUT/amg_reuse/) and the tables (amg_table.py) to $OUT/amg_gpu.md.
set -u
H=$(cd "$(dirname "$0")" && pwd)
export HISP_OPTIONS="cache_dir=$OUT/cache"
mkdir -p "$OUT/amg"
L=$OUT/amg.log
{ date -u; nvidia-smi -L; } >>"$L" 2>&1
for n in ${SIDES:-64 128}; do
  for k in ${KINDS:-poisson3d aniso3d jump3d}; do
    for p in ${PRECONDS:-amg jacobi}; do
      f=$OUT/amg/${k}_${n}_$p.json
      echo "== $k $n $p" >>"$L"
      pc="--precond $p"; [ $p = amg1 ] && pc="--precond amg --amg-block 1"
      timeout 300 "$H/bin/hisp" solve "gen:$k:$n" --method cg $pc --backend cuda \
        --json >"$f" 2>>"$L"
      echo "-- exit $?" >>"$L"
    done
  done
done
for n in ${REUSE:-}; do
  mkdir -p "$OUT/amg_reuse"
  for k in ${KINDS:-poisson3d aniso3d jump3d}; do
    for p in amg jacobi; do
      echo "== $k $n $p --solves 5" >>"$L"
      up=; [ $p = amg ] && up=--update
      timeout 300 "$H/bin/hisp" solve "gen:$k:$n" --method cg --precond $p --backend cuda \
        --solves 5 $up --json >"$OUT/amg_reuse/${k}_${n}_$p.json" 2>>"$L"
      echo "-- exit $?" >>"$L"
    done
  done
done
python3 "$H/amg_table.py" "$OUT/amg" >"$OUT/amg_gpu.md" 2>>"$L"
[ -d "$OUT/amg_reuse" ] && python3 "$H/amg_table.py" --reuse "$OUT/amg_reuse" >>"$OUT/amg_gpu.md" 2>>"$L"
rm -rf "$OUT/cache"
