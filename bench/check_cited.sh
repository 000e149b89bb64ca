#!/bin/sh
# Every raw-result path and plot that docs/BENCHMARKS.md cites must exist.
# Run from the repository root: sh bench/check_cited.sh
doc=docs/BENCHMARKS.md
fail=0
for p in $(grep -o 'bench/results/[A-Za-z0-9_./-]*' "$doc" | sed 's/[.]$//' | sort -u); do
	[ -e "$p" ] || { echo "missing: $p"; fail=1; }
done
for p in $(grep -o '](\(plots\|\.\./bench\)/[^)]*)' "$doc" | sed 's/^](//; s/)$//' | sort -u); do
	[ -e "docs/$p" ] || { echo "missing: docs/$p"; fail=1; }
done
[ $fail = 0 ] && echo "check_cited: every path cited in $doc exists"
exit $fail
