#!/bin/sh
# bench/vet-lease.sh [ROUNDS]
#
# How long go vet -vettool=leaseguard takes on the reference lease package
# alone once its dependencies' facts are cached: the cost a user pays on
# each edit of a lease package. In a scratch copy of this repository, each
# round appends a comment to leasepkg/doc.go, so that go vet reruns every
# rule on leasepkg (and its test variants) while every dependency's vet
# action hits the cache. Prints each round's wall time and the median.
set -eu
rounds=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/leaseguard-lease.XXXXXX")
trap 'rm -rf "$dir"' EXIT
(cd "$root" && git archive HEAD) | tar -x -C "$dir"
cd "$dir"
go build -o "$dir/leaseguard" ./cmd/leaseguard
go vet -vettool="$dir/leaseguard" ./leasepkg >/dev/null # dependencies' facts, cached from here on
: >"$dir/times"
i=1
while [ "$i" -le "$rounds" ]; do
	echo "// round $i" >>leasepkg/doc.go
	/usr/bin/time -f '%e' -a -o "$dir/times" go vet -vettool="$dir/leaseguard" ./leasepkg
	i=$((i + 1))
done
sort -n "$dir/times" | awk '{ t[NR] = $1 } END {
	m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
	printf "go vet -vettool=leaseguard ./leasepkg, dependencies cached: median %.2fs over %d rounds (min %.2fs, max %.2fs)\n", m, NR, t[1], t[NR]
}'
