#!/bin/sh
# Every raw-result path and plot that docs/BENCHMARKS.md cites must exist, and
# every tracked file under bench/results must be cited (itself or a folder above it).
# Run from the repository root: sh bench/check_cited.sh
doc=docs/BENCHMARKS.md
fail=0
for p in $(grep -o 'bench/results/[A-Za-z0-9_./-]*' "$doc" | sed 's/[.]$//' | sort -u); do
	[ -e "$p" ] || { echo "missing: $p"; fail=1; }
done
for p in $(grep -o '](\(plots\|\.\./bench\)/[^)]*)' "$doc" | sed 's/^](//; s/)$//' | sort -u); do
	[ -e "docs/$p" ] || { echo "missing: docs/$p"; fail=1; }
done
cited=$(grep -oh 'bench/results/[A-Za-z0-9_./-]*' "$doc" | sed 's/[.]$//; s#/$##' | sort -u)
for f in $(git ls-files bench/results); do
	ok=0
	for c in $cited; do
		case "$f" in "$c" | "$c"/*) ok=1 && break ;; esac
	done
	[ $ok = 1 ] || { echo "not cited: $f"; fail=1; }
done
[ $fail = 0 ] && echo "check_cited: every path cited in $doc exists and every result there is cited"
exit $fail
