#!/usr/bin/env bash
# tests/readme_check.sh README HISP [CC_FLAGS...]: README.md as pasted.
#  - its C block (after "## A complete program") is examples/readme_example.c
#    byte for byte;
#  - docs/GUIDE.md's C snippets compile, in order, against core/hisp.h;
#  - its CLI tour (the sh block after "## A tour of the hisp program") runs
#    line by line, in order, in a fresh folder where build/bin/hisp is HISP:
#    any nonzero exit fails.
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
mkdir -p "$work/build/bin" && ln -s "$hisp" "$work/build/bin/hisp"
n=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    n=$((n + 1))
    if ! out=$(cd "$work" && bash -c "$line" 2>&1 </dev/null); then
        echo "readme: tour line $n fails as pasted: $line"
        echo "$out" | tail -5 | sed 's/^/    /'
        fails=$((fails + 1))
    fi
done <<<"$tour"
echo "readme: $n tour lines run, $fails failure(s)"
[ "$fails" -eq 0 ]
