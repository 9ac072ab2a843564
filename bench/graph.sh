#!/bin/sh
# bench/graph.sh [ROUNDS] [PACKAGE [DIR]]
#
# What the golangci-lint plugin's second analysis costs on one lease
# package's graph (bench/graph): internal/depcheck, one package at a time,
# against go/packages' LoadAllSyntax with checker.Analyze, which the
# plugin used before. PACKAGE (default github.com/prometheus/prometheus/tsdb)
# is marked as a lease package and analysed with its test variants and
# every package they import, in DIR (default: the prometheus corpus that
# bench/vet.sh set up). Each round runs both, in turn; prints each run's
# time and peak memory (GNU time's maximum resident set), the medians, and
# fails if the two report different findings.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
pkg=${2:-github.com/prometheus/prometheus/tsdb}
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
dir=${3:-$out/corpus-github.com_prometheus_prometheus_v0.316.0}
[ -d "$dir" ] || { echo "bench/graph.sh: no $dir: run bench/vet.sh first, or name a module directory" >&2; exit 2; }
mkdir -p "$out/bin"
(cd "$root" && go build -o "$out/bin/graph" ./bench/graph)
export GOFLAGS=-mod=mod GOWORK=off
# A run before the rounds, so that the export data the first needs is built.
"$out/bin/graph" "$dir" "$pkg" >/dev/null 2>&1 || true

: >"$out/graph.tsv"
for i in $(seq "$rounds"); do
	for mode in depcheck checker; do
		flag=; [ "$mode" = checker ] && flag=-checker
		/usr/bin/time -o "$out/graph.time" -f '%e %M' "$out/bin/graph" $flag "$dir" "$pkg" >"$out/graph-$mode.out" 2>"$out/graph.err" ||
			{ cat "$out/graph.err" >&2; exit 1; }
		read -r secs kib <"$out/graph.time"
		echo "round $i $mode: ${secs}s, $((kib / 1024)) MiB, $(wc -l <"$out/graph-$mode.out") findings"
		printf '%s\t%s\t%s\n' "$mode" "$secs" "$kib" >>"$out/graph.tsv"
	done
	cmp -s "$out/graph-depcheck.out" "$out/graph-checker.out" ||
		{ echo "bench/graph.sh: the two report different findings:" >&2; diff "$out/graph-checker.out" "$out/graph-depcheck.out" >&2; exit 1; }
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for mode in depcheck checker; do
	secs=$(awk -F'\t' -v m="$mode" '$1 == m {print $2}' "$out/graph.tsv" | median)
	kib=$(awk -F'\t' -v m="$mode" '$1 == m {print $3}' "$out/graph.tsv" | median)
	echo "$mode: median ${secs}s, $((kib / 1024)) MiB over $rounds rounds"
done
