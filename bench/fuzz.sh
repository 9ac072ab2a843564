#!/bin/sh
# bench/fuzz.sh [TIME]
#
# Runs every Go fuzz target (func FuzzXxx(*testing.F)) in the module, one
# after another, each for TIME (a go test -fuzztime value, default 60s),
# and prints per target its package, name, executions and whether it found
# a crasher. The targets are found with go test -list '^Fuzz' in every
# package that has tests, so a new target is fuzzed without being named
# here. A crasher is written by go test to the package's
# testdata/fuzz/FuzzXxx/ and then runs as a seed in every go test; fix the
# code and keep the file.
#
# FUZZ_PARALLEL sets the fuzzing workers per target (default 1: the
# machines this project runs on have two cores, shared). The output of
# each run is kept in $LEASEGUARD_BENCH_DIR/fuzz/PKG.TARGET.log. Exits 1 if
# any target failed.
set -eu
fuzztime=${1:-60s}
parallel=${FUZZ_PARALLEL:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}/fuzz
mkdir -p "$out"
cd "$root"

# 1. The targets: go test -list prints a package's matching names, then
#    "ok  PKG ..." (or "?  PKG [no test files]").
pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)
# shellcheck disable=SC2086 # one argument per package
targets=$(go test -list '^Fuzz' $pkgs | awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }')
if [ -z "$targets" ]; then
	echo "bench/fuzz.sh: no fuzz targets found" >&2
	exit 1
fi
echo "$(echo "$targets" | wc -l) fuzz targets, $fuzztime each, $parallel worker(s)" >&2

# 2. Each target in turn.
status=0
printf '%-50s %-28s %12s %8s  %s\n' package target execs seconds result
echo "$targets" | while read -r pkg name; do
	log=$out/$(echo "$pkg" | tr '/' '_').$name.log
	start=$(date +%s)
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel "$parallel" "$pkg" >"$log" 2>&1; then
		result=ok
	else
		crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)
		if [ -n "$crasher" ]; then
			result="CRASHER $(go list -f '{{.Dir}}' "$pkg")/$crasher (log: $log)"
		else
			result="FAILED (log: $log)"
		fi
	fi
	secs=$(($(date +%s) - start))
	# The last progress line carries the total: "fuzz: elapsed: 60s, execs: 123456 (...)".
	execs=$(sed -n 's/^fuzz: elapsed: [0-9]*s, execs: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	printf '%-50s %-28s %12s %8s  %s\n' "${pkg#github.com/leaseguard/leaseguard/}" "$name" "${execs:-?}" "$secs" "$result"
	[ "$result" = ok ] || echo fail >>"$out/failed.$$"
done
if [ -f "$out/failed.$$" ]; then
	rm -f "$out/failed.$$"
	status=1
fi
exit $status
