#!/bin/sh
# bench/append.sh [COUNT]
#
# Fenced writes against unfenced inserts of the same rows, on a throwaway
# PostgreSQL cluster (or $LEASE_DATABASE_URL: bench/durable.sh
# bench/append.sh runs it at PostgreSQL's durable defaults; each benchmark
# logs the server's settings), and renewal latency. Runs
# leasepkg's benchmarks COUNT times (default 5), each time all of them in
# turn, so that fenced and plain runs alternate (A B A B ...) and drift on
# the machine falls on both. Then prints, per shape and writer count, the
# median throughput of each kind and the median of the paired ratios.
set -eu
cd "$(dirname "$0")/.."
count=${1:-5}
out=$(mktemp)
trap 'rm -f "$out" "$out.test"' EXIT
go test -c -o "$out.test" ./leasepkg/
for i in $(seq "$count"); do
	"$out.test" -test.run '^$' -test.bench 'Append|Renew' -test.benchtime 2s | tee -a "$out"
done
echo
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkAppend\// {
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[4])
	key = p[2] "/" p[3]; kind = p[4]; sub(/^kind=/, "", kind)
	for (i = 1; i <= NF; i++) if ($(i + 1) == "orders/s") {
		v[key, kind] = v[key, kind] " " $i
		if (kind == "plain") r[key] = r[key] " " last[key] / $i  # fenced runs just before plain
		else last[key] = $i
	}
	keys[key] = 1
}
/^BenchmarkRenew/ {
	for (i = 1; i <= NF; i++) { if ($(i + 1) == "p50-µs") p50 = p50 " " $i; if ($(i + 1) == "p99-µs") p99 = p99 " " $i }
}
END {
	printf "%-28s %14s %14s %14s\n", "median of runs", "fenced ord/s", "plain ord/s", "paired ratio"
	for (k in keys)
		printf "%-28s %14.0f %14.0f %14.2f\n", k, median(v[k, "fenced"]), median(v[k, "plain"]), median(r[k])
	if (p50 != "") printf "renew round trip: median %s µs, p99 %s µs (medians over runs)\n", median(p50), median(p99)
}' "$out"
