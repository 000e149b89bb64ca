#!/usr/bin/env bash
# examples/test_install.sh PREFIX: check a hisp installed with
# `scons install prefix=PREFIX` as a user's build sees it. `./hisp.sh
# test-install` installs into a temporary prefix and runs this (CI does).
#  - libhisp.so: SONAME libhisp.so.MAJOR, the version's symlinks, no NEEDED
#    CUDA library (cuSPARSE and NVRTC are opened when the CUDA backend first
#    needs them) and no OpenCL ICD loader (opened at the first OpenCL call),
#    no run path; the hisp program needs neither
#  - README's build lines run as written (taken from README.md, DIR its
#    install folder, from a folder where examples/ is this one): the sh
#    blocks of "## Using the library" (examples/spmv_example.c through
#    pkg-config: hisp shared, hisp-static with libhisp.a) and of "## A
#    complete program" (examples/readme_example.c; exit 0: its CG solve
#    converged)
#  - examples/spmv_example.c built and run through CMake (hisp::hisp,
#    hisp::hisp_static)
#  - the shared build run with the CUDA libraries off the loader's path (the
#    loader's cache ignored, only the system's folders searched)
# Prints one line per check; exit status 1 when one failed.
set -uo pipefail
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset LD_LIBRARY_PATH
CC="${CC:-cc}"
fails=0
ok() { echo "test-install: ok    $*"; }
bad() {
    echo "test-install: FAIL  $*"
    fails=$((fails + 1))
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
cuda_re='libcuda\.|libcudart|libcusparse|libnvrtc|libnvJitLink|libcublas'

# ---- the library ---------------------------------------------------------------
version=$(pkg-config --modversion hisp) || { bad "pkg-config finds no hisp in $PKG_CONFIG_PATH"; exit 1; }
major=${version%%.*}
lib=$prefix/lib/libhisp.so
real=$prefix/lib/libhisp.so.$version
if [ -f "$real" ] && [ "$(readlink -f "$lib")" = "$real" ] &&
    [ "$(readlink -f "$prefix/lib/libhisp.so.$major")" = "$real" ]; then
    ok "libhisp.so -> libhisp.so.$major -> libhisp.so.$version"
else
    bad "libhisp.so symlinks: $(ls -l "$prefix"/lib/libhisp.so* 2>&1 | tr '\n' ' ')"
fi
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libhisp.so.$major" ] && ok "SONAME $soname" || bad "SONAME '$soname'"
deps=$(needed "$real")
if echo "$deps" | grep -Eq "$cuda_re"; then bad "libhisp.so needs CUDA libraries: $deps"; else ok "libhisp.so needs $deps"; fi
if echo "$deps" | grep -q "libOpenCL"; then bad "libhisp.so needs the OpenCL loader: $deps"; else ok "libhisp.so does not need libOpenCL"; fi
if needed "$prefix/bin/hisp" | grep -Eq "libOpenCL|$cuda_re"; then
    bad "bin/hisp needs $(needed "$prefix/bin/hisp")"
else
    ok "bin/hisp needs neither libOpenCL nor a CUDA library"
fi
if readelf -d "$real" | grep -Eq 'RPATH|RUNPATH'; then bad "libhisp.so has a run path"; else ok "libhisp.so has no run path"; fi
hisp_v=$("$prefix/bin/hisp" --version 2>&1)
[ "$hisp_v" = "hisp $version" ] && ok "hisp --version: $hisp_v" || bad "hisp --version '$hisp_v', pkg-config $version"

# ---- helpers -------------------------------------------------------------------
# run NAME COMMAND...: expects "ok" and the installed version
run() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1) && echo "$out" | grep -q "^ok$" && echo "$out" | grep -q "hisp $version,"; then
        ok "$name: $(echo "$out" | head -1)"
    else
        bad "$name: $out"
    fi
}
# linked NAME EXE shared|static: libhisp.so in NEEDED or not
linked() {
    local d
    d=$(needed "$2")
    case "$3" in
    shared) echo "$d" | grep -q "libhisp.so.$major" && ok "$1 needs libhisp.so.$major" || bad "$1 needs '$d'" ;;
    static) echo "$d" | grep -q "libhisp" && bad "$1 needs libhisp.so ($d)" || ok "$1 has libhisp.a inside (needs $d)" ;;
    esac
}

# ---- README's lines, as written ----------------------------------------------------
readme=$(cd "$src/.." && pwd)/README.md
# block HEADING: the first ```sh block after the line "HEADING"
block() {
    awk -v h="$1" '
        $0 == h { seen = 1; next }
        seen && !inb && $0 == "```sh" { inb = 1; next }
        inb && $0 == "```" { exit }
        inb { print }' "$readme"
}
lines=$(block "## Using the library"; block "## A complete program")
ln -s "$src" "$work/examples"
n=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    n=$((n + 1))
    # one shell, as a paste: the export carries on to the next lines
    printf '{\n%s\n} >"$1/readme.%d.out" 2>&1 </dev/null; echo $? >"$1/readme.%d.rc"\n' \
        "${line//DIR/$prefix}" "$n" "$n"
done <<<"$lines" >"$work/readme.sh"
(cd "$work" && bash "$work/readme.sh" "$work")
k=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    k=$((k + 1))
    if [ "$(cat "$work/readme.$k.rc" 2>/dev/null)" = 0 ]; then
        ok "README: $line"
    else
        bad "README: $line: $(tail -5 "$work/readme.$k.out" 2>/dev/null)"
    fi
done <<<"$lines"
[ "$n" -ge 4 ] || bad "README: $n build lines found (the export, two pkg-config builds, README's program)"
for kind in shared static; do
    exe=$work/spmv_$kind
    if [ -x "$exe" ]; then
        linked "README's pkg-config hisp$([ $kind = static ] && echo -static)" "$exe" $kind
        run "README's pkg-config hisp$([ $kind = static ] && echo -static)" "$exe"
    else
        bad "README's lines built no spmv_$kind"
    fi
done
[ -x "$work/readme_example" ] || bad "README's lines built no readme_example"

for kind in shared static; do
    b=$work/cmake_$kind
    st=OFF
    [ $kind = static ] && st=ON
    if cmake -S "$src" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DHISP_STATIC=$st >"$b.log" 2>&1 &&
        cmake --build "$b" >>"$b.log" 2>&1; then
        linked "cmake hisp::hisp$([ $kind = static ] && echo _static)" "$b/spmv_example" $kind
        run "cmake hisp::hisp$([ $kind = static ] && echo _static)" "$b/spmv_example"
    else
        bad "cmake $kind: $(tail -20 "$b.log")"
    fi
done

# ---- without the CUDA libraries ---------------------------------------------------
# the loader's cache (which may list the toolkit's folder) ignored, only the
# system's folders searched: libhisp.so and the example start, the default
# backend runs, and the reference backend opens no CUDA library
ldso=$(readelf -l "$work/spmv_shared" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
multi=$(${CC} -print-multiarch 2>/dev/null || true)
syspath=/lib:/usr/lib${multi:+:/lib/$multi:/usr/lib/$multi}
if [ -x "$ldso" ] && [ -x "$work/spmv_shared" ]; then
    run "no CUDA on the path, default backend" "$ldso" --inhibit-cache --library-path "$syspath" "$work/spmv_shared"
    opened=$(LD_DEBUG=files "$ldso" --inhibit-cache --library-path "$syspath" "$work/spmv_shared" reference 2>&1 |
        grep -Eo "file=[^ ]*($cuda_re)[^ ]*" | sort -u | tr '\n' ' ')
    [ -z "$opened" ] && ok "reference backend: no CUDA library opened" || bad "reference backend opened $opened"
fi

[ "$fails" -eq 0 ] && echo "test-install: all checks passed ($prefix, hisp $version)" ||
    echo "test-install: $fails check(s) failed"
[ "$fails" -eq 0 ]
