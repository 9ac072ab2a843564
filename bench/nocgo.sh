#!/bin/sh
# bench/nocgo.sh [ROUNDS]
#
# What the parser of a build without cgo (PostgreSQL's parser as
# WebAssembly, run by wazero) costs under go vet, where each package is a
# process of its own and each process that parses SQL loads the parser
# afresh. On a scratch copy of testdata/example, paired rounds of the cgo
# build and the CGO_ENABLED=0 build, the latter with its compilation cache
# empty (XDG_CACHE_HOME a fresh directory each round, GOCACHE kept: every
# process that parses compiles the module, as on a machine's first run) and
# written (as on every later run):
#
#   go vet -vettool=T ./lease   after an edit of the lease package, its
#                               dependencies' facts cached: the one
#                               process that parses, what an edit costs;
#   go vet -vettool=T ./...     with a freshly salted tool, so that every
#                               unit, the dependencies' included, runs.
#
# Prints the median wall time of each over ROUNDS rounds (default 5).
set -eu
rounds=${1:-5}
# XDG_CACHE_HOME moves the go command's build cache too: keep that one.
GOCACHE=$(go env GOCACHE)
export GOCACHE
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/leaseguard-nocgo.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp -R "$root/testdata/example" "$dir/example"
(cd "$root" && go build -o "$dir/cgo" ./cmd/leaseguard)
(cd "$root" && CGO_ENABLED=0 go build -o "$dir/wasm" ./cmd/leaseguard)
mkdir -p "$dir/warm"
cd "$dir/example"
XDG_CACHE_HOME=$dir/warm "$dir/wasm" -test ./lease >/dev/null 2>&1 || true # writes the compilation cache
for tool in cgo wasm; do
	go vet -vettool="$dir/$tool" ./... >/dev/null 2>&1 || true # dependencies' facts, cached from here on
done

# timed NAME CMD...: runs CMD, appending its wall time to $dir/NAME.
timed() {
	name=$1
	shift
	/usr/bin/time -f '%e' -a -o "$dir/$name" "$@" >/dev/null 2>&1 || true
}

# salt TOOL copies TOOL to $dir/salted with a new identity, so that go
# vet's cache misses and every unit runs again.
salt() {
	cp "$dir/$1" "$dir/salted"
	printf '\nsalt %s\n' "$(date +%s%N)" >>"$dir/salted"
}

i=1
while [ "$i" -le "$rounds" ]; do
	echo "// round $i" >>lease/renew.go
	timed "lease cgo" go vet -vettool="$dir/cgo" ./lease
	echo "// round $i, empty cache" >>lease/renew.go
	XDG_CACHE_HOME=$dir/cold-lease-$i timed "lease wasm, cache empty" go vet -vettool="$dir/wasm" ./lease
	echo "// round $i, cache" >>lease/renew.go
	XDG_CACHE_HOME=$dir/warm timed "lease wasm, cache written" go vet -vettool="$dir/wasm" ./lease
	salt cgo
	timed "all cgo" go vet -vettool="$dir/salted" ./...
	salt wasm
	XDG_CACHE_HOME=$dir/cold-all-$i timed "all wasm, cache empty" go vet -vettool="$dir/salted" ./...
	salt wasm
	XDG_CACHE_HOME=$dir/warm timed "all wasm, cache written" go vet -vettool="$dir/salted" ./...
	i=$((i + 1))
done

for name in "lease cgo" "lease wasm, cache empty" "lease wasm, cache written" "all cgo" "all wasm, cache empty" "all wasm, cache written"; do
	case $name in
	lease*) what="go vet ./lease after an edit" ;;
	*) what="go vet ./..., every unit" ;;
	esac
	# go vet exits 1 with findings, and time says so on a line of its own.
	grep -E '^[0-9.]+$' "$dir/$name" | sort -n | awk -v what="$what" -v name="${name#* }" '{ t[NR] = $1 } END {
		m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
		printf "%-30s %-26s median %6.2fs over %d rounds (min %.2fs, max %.2fs)\n", what, name, m, NR, t[1], t[NR]
	}'
done
