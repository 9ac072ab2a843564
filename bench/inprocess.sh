#!/bin/sh
# bench/inprocess.sh [ROUNDS] [REV] [PACKAGE [DIR]]
#
# What the standalone command's run in process costs on one lease
# package's graph: leaseguard -diff (a flag that go vet does not have, so
# the analysis stays in process) with PACKAGE (default
# github.com/prometheus/prometheus/tsdb) marked as a lease package, in DIR
# (default: the prometheus corpus that bench/vet.sh set up), by this
# tree's binary and by one built from REV (default 7c08478, the last
# commit whose run in process loaded the whole graph with go/packages and
# x/tools' multichecker; since then it goes through internal/depcheck).
# Each round runs both, in turn; prints each run's time and peak memory
# (GNU time's maximum resident set), the medians, and fails if the two
# print different findings.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
rev=${2:-7c08478}
pkg=${3:-github.com/prometheus/prometheus/tsdb}
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
dir=${4:-$out/corpus-github.com_prometheus_prometheus_v0.316.0}
[ -d "$dir" ] || { echo "bench/inprocess.sh: no $dir: run bench/vet.sh first, or name a module directory" >&2; exit 2; }
mkdir -p "$out/bin"
(cd "$root" && go build -o "$out/bin/leaseguard-now" ./cmd/leaseguard)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$root" archive "$rev" | tar -x -C "$src"
(cd "$src" && go build -o "$out/bin/leaseguard-$rev" ./cmd/leaseguard)
export GOFLAGS=-mod=mod GOWORK=off
cd "$dir"
# A run of each before the rounds, so that the go command's cache holds
# what both need (export data, cgo's output).
for bin in now "$rev"; do
	"$out/bin/leaseguard-$bin" -diff -lease.packages="$pkg" "$pkg" >/dev/null 2>&1 || true
done

: >"$out/inprocess.tsv"
for i in $(seq "$rounds"); do
	for bin in "$rev" now; do
		code=0
		/usr/bin/time -o "$out/inprocess.time" -f '%e %M' "$out/bin/leaseguard-$bin" -diff -lease.packages="$pkg" "$pkg" \
			>"$out/inprocess-$bin.out" 2>"$out/inprocess-$bin.err" || code=$?
		case $code in
		0 | 3) ;;
		*) cat "$out/inprocess-$bin.err" >&2; exit 1 ;;
		esac
		# With a non-zero exit, GNU time writes a line saying so first.
		read -r secs kib <<-EOF
			$(tail -n 1 "$out/inprocess.time")
		EOF
		echo "round $i $bin: ${secs}s, $((kib / 1024)) MiB, $(grep -c '^/' "$out/inprocess-$bin.err" || true) lines of findings, exit $code"
		printf '%s\t%s\t%s\n' "$bin" "$secs" "$kib" >>"$out/inprocess.tsv"
	done
	cmp -s "$out/inprocess-$rev.err" "$out/inprocess-now.err" ||
		{ echo "bench/inprocess.sh: the two print different findings:" >&2; diff "$out/inprocess-$rev.err" "$out/inprocess-now.err" >&2; exit 1; }
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for bin in "$rev" now; do
	secs=$(awk -F'\t' -v b="$bin" '$1 == b {print $2}' "$out/inprocess.tsv" | median)
	kib=$(awk -F'\t' -v b="$bin" '$1 == b {print $3}' "$out/inprocess.tsv" | median)
	echo "$bin: median ${secs}s, $((kib / 1024)) MiB over $rounds rounds"
done
