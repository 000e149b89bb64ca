#!/bin/bash
# SELL-C-sigma on the GPU machine, through `hisp bench` (wall per call with a
# synchronize, device ms beside it): hisp CSR, hisp SELL and cuSPARSE in the
# same run, on the six generated matrices of BENCHMARKS' CSR suite (f64 and
# f32, op N; op T in f64) and the matrices of ../shared/matrices (f64, op N),
# then what `--format auto` chooses. With .gpu/old/bin/hisp staged (a build
# of an earlier commit), `hisp bench` SpMV and CG rows of both builds,
# alternated, for a before/after in one call. Stage with
# `bash bench/stage_gpu.sh sell [OLD_BUILD_DIR]`; on the device
# `OUT=$OUT bash .gpu/sell_gpu.sh [tests] [suite|some] [files] [auto] [before]`
# (some: the suite's matrices named in SELL_SUITE, e.g. "rmat:22 dense:4096")
# (default all; tests: every suite of check_hisp on CUDA, six at a time, logs in
# $OUT/suites.tgz). Writes $OUT/sell.log and $OUT/sell.tgz (the JSON reports:
# the device tool brings back at most 8 files).
set -u
H=$(cd "$(dirname "$0")" && pwd)
export HISP_MATRICES=$H/matrices HISP_OPTIONS="cache_dir=$OUT/cache"
parts=${*:-tests suite files auto before}
L=$OUT/sell.log
J=$OUT/sell
mkdir -p "$J"
{ date -u; nvidia-smi -L; } >>"$L" 2>&1
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
b() { # name, seconds, hisp binary, bench arguments...
  local name=$1 secs=$2 bin=$3; shift 3
  echo "== $name: $*" >>"$L"
  timeout "$secs" "$bin" bench "$@" --json >"$J/$name.json" 2>>"$L"; echo "-- exit $?" >>"$L"
}
SUITE="poisson3d:160 banded:2000000 rmat:22 dense:4096 circuit:2000000 blockdiag:2000000"
has some && SUITE=${SELL_SUITE:-$SUITE} && parts="$parts suite"
if has tests; then # every suite on the CUDA backend (the reference as the oracle), 6 at a time
  echo "== check_hisp (cuda), suites in parallel" >>"$L"
  mkdir -p "$OUT/suites"
  xargs -P 6 -I{} sh -c "timeout ${TESTS_S:-400} env HISP_TEST_BACKENDS=cuda CK_RUN_SUITE={} CK_TIMEOUT_MULTIPLIER=4 '$H/tests/check_hisp' >'$OUT/suites/{}.log' 2>&1; echo \"{} exit \$?\" >>'$OUT/suites/exits'" <"$H/tests/suites"
  for f in "$OUT"/suites/*.log; do tail -n 2 "$f"; done >>"$L"
  sort "$OUT/suites/exits" >>"$L"
  tar czf "$OUT/suites.tgz" -C "$OUT" suites && rm -rf "$OUT/suites"
fi
if has suite; then
  for g in $SUITE; do
    n=${g%%:*}
    for t in f64 f32; do
      b "$n-$t-csr" 120 "$H/bin/hisp" "gen:$g:42" --type $t --backends cuda,cusparse --repeat 50
      b "$n-$t-sell" 120 "$H/bin/hisp" "gen:$g:42" --type $t --backends cuda --format sell --repeat 50
    done
    b "$n-f64-csr-t" 120 "$H/bin/hisp" "gen:$g:42" --op spmvt --backends cuda,cusparse --repeat 50
    b "$n-f64-sell-t" 120 "$H/bin/hisp" "gen:$g:42" --op spmvt --backends cuda --format sell --repeat 50
  done
fi
if has files; then
  for f in "$H"/matrices/*.mtx; do
    n=$(basename "$f" .mtx)
    b "file-$n-csr" 60 "$H/bin/hisp" "$f" --backends cuda,cusparse --repeat 50
    b "file-$n-sell" 60 "$H/bin/hisp" "$f" --backends cuda --format sell --repeat 50
  done
fi
if has auto; then
  for s in $SUITE; do
    echo "== auto gen:$s:42" >>"$L"
    timeout 200 "$H/bin/hisp" tune "gen:$s:42" --backend cuda --json >"$J/auto-${s%%:*}.json" 2>>"$L"; echo "-- exit $?" >>"$L"
  done
  for n in ${AUTO_FILES:-bcsstk33 CA-HepPh ca-CondMat fidapex6 bayer10 Groebner_id2003_aug Pd cage8}; do
    timeout 60 "$H/bin/hisp" tune "$H/matrices/$n.mtx" --backend cuda --json >"$J/auto-file-$n.json" 2>>"$L"
  done
fi
if has before && [ -x "$H/old/bin/hisp" ]; then
  for round in 1 2; do
    for v in old new; do
      bin=$H/bin/hisp; [ $v = old ] && bin=$H/old/bin/hisp
      for g in poisson3d:160 rmat:22; do
        b "before-$v-$round-spmv-${g%%:*}" 120 "$bin" "gen:$g:42" --backends cuda --repeat 50
      done
      b "before-$v-$round-cg-poisson3d" 200 "$bin" gen:poisson3d:160:42 --op solve --backends cuda --iterations 200
    done
  done
fi
rm -rf "$OUT/cache"
tar czf "$OUT/sell.tgz" -C "$OUT" sell && rm -rf "$J"
