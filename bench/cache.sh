#!/bin/sh
# bench/cache.sh [CORPUS@VERSION]
#
# go vet -vettool=leaseguard on two CI machines that share the go command's
# cache through GOCACHEPROG, set up as the end-to-end test of a shared cache
# (cmd/leaseguard, TestSharedCache) sets them up: go-cacher on each machine
# and one go-cacher-server between them on 127.0.0.1 (bradfitz/go-tool-cache,
# built by scripts/go-cacher.sh), every cache empty at the start. The corpus
# is a copy of a pinned module (default
# github.com/prometheus/prometheus@v0.316.0, as bench/vet.sh takes it) from
# the Go module proxy, made the main module of a scratch directory; its
# modules are downloaded before anything is measured, as a CI machine's
# module cache or proxy would hold them.
#
# Runs, one after the other, on the same directory (CI runners check out
# at the same path; without -trimpath the path is part of the cache keys):
#   first   the first machine: everything compiled and analysed, every
#           result put in the server
#   second  the second machine, the same command: every result from the
#           server
#   alone   with LEASEGUARD_BENCH_ALONE=1, first of all: a third machine
#           with an empty cache and no server, the cold run without sharing
# and prints for each the wall time, peak memory (the largest process of
# the tree, /usr/bin/time), exit status, findings (diagnostic lines), and
# go-cacher's count of gets, hits and misses; then whether the second
# machine's output is the first's, line for line. LEASEGUARD_BENCH_FLAGS
# adds flags to the vet tool (default none). Logs: $LEASEGUARD_BENCH_DIR/cache/.
set -eu
corpus=${1:-github.com/prometheus/prometheus@v0.316.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
mkdir -p "$out/bin"
flags=${LEASEGUARD_BENCH_FLAGS:-}

# 1. The tools.
(cd "$root" && go build -o "$out/bin/leaseguard" ./cmd/leaseguard)
cacher=$("$root/scripts/go-cacher.sh")

# 2. The corpus, as bench/vet.sh makes it (the same directory), its
#    modules downloaded.
dir=$out/corpus-$(echo "$corpus" | tr '/@' '__')
if [ ! -d "$dir" ]; then
	src=$(cd "$out" && go mod download -json "$corpus" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	rm -rf "$dir.tmp"
	cp -R "$src" "$dir.tmp"
	chmod -R u+w "$dir.tmp"
	mv "$dir.tmp" "$dir"
fi
cd "$dir"
export GOFLAGS=-mod=mod GOWORK=off
go mod download

# 3. The server, on a free port, with an empty store.
work=$out/cache
rm -rf "$work"
mkdir -p "$work"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$cacher/go-cacher-server" -cache-dir "$work/server" -listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
i=0
until [ "$(curl -fsS "http://127.0.0.1:$port/" 2>/dev/null)" = hi ]; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || { echo "bench/cache.sh: go-cacher-server did not answer" >&2; cat "$work/server.log" >&2; exit 1; }
	sleep 0.1
done

# machine NAME [SERVER]: runs go vet with an empty local cache of its own
# (GOCACHE and go-cacher's directory), sharing through SERVER if given.
machine() {
	name=$1
	share=${2:+ -cache-server $2}
	# shellcheck disable=SC2086 # flags: words
	GOCACHE=$work/$name/gocache GOCACHEPROG="$cacher/go-cacher -verbose -cache-dir $work/$name/go-cacher$share" \
		/usr/bin/time -f '%e %M %x' -o "$work/$name.time" \
		go vet -vettool="$out/bin/leaseguard" $flags ./... >"$work/$name.out" 2>&1 || true
	# shellcheck disable=SC2046 # three fields
	set -- $(tail -n 1 "$work/$name.time")
	findings=$(grep -Ec '^[^[:space:]#][^[:space:]]*\.go:[0-9]+:[0-9]+: [^[:space:]]' "$work/$name.out" || true)
	gets=$(sed -n 's/.*cacher: closing; \([0-9]*\) gets (\([0-9]*\) hits, \([0-9]*\) misses.*/\1 \2 \3/p' "$work/$name.out" | tail -n 1)
	# shellcheck disable=SC2086 # three fields
	printf '%-8s %9s %9s %5s %9s %7s %7s %7s\n' "$name" "$1" "$(($2 / 1024))" "$3" "$findings" $gets
	# The output without go-cacher's log lines, which carry the time.
	grep -Ev '^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} ' "$work/$name.out" | sort >"$work/$name.sorted"
}

echo "corpus: $corpus: $(go list ./... | wc -l) packages, $(go list -deps ./... | wc -l) with dependencies" >&2
printf '%-8s %9s %9s %5s %9s %7s %7s %7s\n' machine seconds peak-MiB exit findings gets hits misses
if [ "${LEASEGUARD_BENCH_ALONE:-}" = 1 ]; then
	machine alone
fi
machine first "http://127.0.0.1:$port"
machine second "http://127.0.0.1:$port"
if cmp -s "$work/first.sorted" "$work/second.sorted"; then
	echo "the second machine's output is the first's ($(wc -l <"$work/first.sorted") lines)"
else
	echo "the second machine's output differs from the first's:" >&2
	diff "$work/first.sorted" "$work/second.sorted" >&2 || true
	exit 1
fi
