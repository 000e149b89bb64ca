#!/usr/bin/env bash
# tests/readme_check.sh README HISP [CC_FLAGS...]: README.md as pasted.
#  - its C block (after "## A complete program") is examples/readme_example.c
#    byte for byte;
#  - docs/GUIDE.md's C snippets compile, in order, against core/hisp.h;
#  - its CLI tour (the sh block after "## A tour of the hisp program") runs
#    in one shell, line by line in order, from a fresh folder where
#    build/bin/hisp is HISP: any nonzero exit fails, and so does a file the
#    tour leaves in that folder.
# Run by the readme suite (tests/check_readme.c). Prints what failed; exit 1.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 README HISP" >&2; exit 2; }
readme=$1
hisp=$(readlink -f "$2")
src=$(cd "$(dirname "$readme")" && pwd)
# block HEADING LANG: the first ```LANG block after the line "HEADING"
block() {
    awk -v h="$1" -v fence="\`\`\`$2" '
        $0 == h { seen = 1; next }
        seen && !inb && $0 == fence { inb = 1; next }
        inb && $0 == "```" { exit }
        inb { print }' "$readme"
}
fails=0
if ! diff <(block "## A complete program" c) "$src/examples/readme_example.c" >/dev/null; then
    echo "readme: the C block under \"## A complete program\" differs from examples/readme_example.c"
    fails=$((fails + 1))
fi
# docs/GUIDE.md's C snippets, in order, compile as one function against core/hisp.h (the
# interop ones get their caller's buffers and stream declared here)
guide=$src/docs/GUIDE.md
if [ -f "$guide" ]; then
    gsrc=$(mktemp --suffix=.c)
    {
        printf '#include <hisp.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(void)\n{\n'
        printf '    int64_t n = 3, nrows = 3, ncols = 3, nnz = 5;\n'
        printf '    void *d_x = 0, *d_y = 0, *d_rowptr = 0, *d_colind = 0, *d_val = 0, *my_stream = 0;\n'
        awk '$0 == "```c" { inb = 1; next } inb && $0 == "```" { inb = 0; next } inb { print }' "$guide"
        printf '    return s;\n}\n'
    } >"$gsrc"
    if ! out=$(${CC:-cc} -std=c11 -Wall -Wextra -Werror -Wno-unused-variable \
        -Wno-unused-but-set-variable -fsyntax-only -I"$src/core" "$gsrc" 2>&1); then
        echo "readme: docs/GUIDE.md's C snippets do not compile against core/hisp.h:"
        echo "$out" | head -20 | sed 's/^/    /'
        fails=$((fails + 1))
    fi
    rm -f "$gsrc"
fi
tour=$(block "## A tour of the \`hisp\` program" sh)
if [ -z "$tour" ]; then
    echo "readme: no sh block under \"## A tour of the \`hisp\` program\""
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/bin" "$work/tmp" "$work/log" && ln -s "$hisp" "$work/build/bin/hisp"
# One shell runs the lines in order, as a paste does (a cd or an export
# carries on); each line's output and status are kept apart. mktemp's
# folders go under $work/tmp.
script=$work/log/tour.sh
n=0
{
    echo 'cd "$1" || exit 1'
    while IFS= read -r line; do
        [ -z "$line" ] && continue
        n=$((n + 1))
        printf '{\n%s\n} >"$2/%d.out" 2>&1 </dev/null; echo $? >"$2/%d.rc"\n' "$line" "$n" "$n"
    done <<<"$tour"
} >"$script"
n=$(grep -c '\.rc"$' "$script")
(cd / && TMPDIR="$work/tmp" bash "$script" "$work" "$work/log") </dev/null
k=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    k=$((k + 1))
    rc=$(cat "$work/log/$k.rc" 2>/dev/null || echo "not run")
    if [ "$rc" != 0 ]; then
        echo "readme: tour line $k fails as pasted (exit $rc): $line"
        tail -5 "$work/log/$k.out" 2>/dev/null | sed 's/^/    /'
        fails=$((fails + 1))
    fi
done <<<"$tour"
# the tour writes its files in its scratch folder, none where it starts
left=$(cd "$work" && ls -A | grep -vxE 'build|tmp|log')
if [ -n "$left" ]; then
    echo "readme: the tour leaves files where it starts: $(echo "$left" | tr '\n' ' ')"
    fails=$((fails + 1))
fi
echo "readme: $n tour lines run, $fails failure(s)"
[ "$fails" -eq 0 ]
