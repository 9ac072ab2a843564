#!/bin/sh
# bench/vet.sh [PAIRS] [CORPUS@VERSION]
#
# Measures leaseguard against the floor on a large public codebase that no
# one here wrote: a copy of a pinned module (default
# github.com/prometheus/prometheus@v0.316.0) from the Go module proxy, made
# the main module of a scratch directory, so that go vet and golangci-lint
# see the same packages (golangci-lint lints only the main module's).
#
# Contenders, run in rounds (each round runs every contender once, in a
# rotating order), PAIRS rounds (default 5):
#   noop        go vet -vettool=noopvet: the floor (type checking and the driver)
#   leaseguard  go vet -vettool=leaseguard
#   lg-gogc100  the same with GOGC=100, which turns off the larger starting
#               heap that a leaseguard vet unit takes (internal/driver): what
#               the analysis itself costs over the floor
#   vet         go vet with its default analyzers
#   standalone  leaseguard ./... (its own loader, no vet cache); the corpus
#               has no lease package, so this is the package listing alone
#   standalone-lease
#               leaseguard -lease.packages=$LEASEGUARD_BENCH_LEASE ./...
#               (default github.com/prometheus/prometheus/tsdb): one lease
#               package, loaded with its imports
#   golist      go list ./...: what a run on a repository without a lease
#               package is compared with
#   golangci    golangci-lint with depguard and forbidigo set up to approximate
#               the imports and clock rules, with a fresh golangci-lint cache
#   golangci-lg the same golangci-lint binary (built with the leaseguard
#               plugin) running leaseguard alone, with a fresh cache
# LEASEGUARD_BENCH_CONTENDERS picks some of them (default: all), e.g.
# "noop leaseguard" for the paired ratio against the floor alone.
# Every go vet run defeats the vet result cache with a salted copy of its
# tool (../shared/tools/vet-once.sh's method, inlined: every vet action,
# dependencies' facts-only ones included, reruns; every compile action
# still hits). Wall time and peak memory (max RSS of the process tree's
# largest process, /usr/bin/time -v) per run go to $OUT/runs.tsv; the
# summary prints medians and the median of paired ratios against noop.
set -eu
pairs=${1:-5}
corpus=${2:-github.com/prometheus/prometheus@v0.316.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
mkdir -p "$out/bin"

# 1. The tools.
(cd "$root" && go build -o "$out/bin/leaseguard" ./cmd/leaseguard && go build -o "$out/bin/noopvet" ./bench/noopvet)
contenders=${LEASEGUARD_BENCH_CONTENDERS:-noop leaseguard lg-gogc100 vet standalone standalone-lease golist golangci golangci-lg}
lease=${LEASEGUARD_BENCH_LEASE:-github.com/prometheus/prometheus/tsdb}
case " $contenders " in
*" golangci"*) gcl=$("$root/scripts/golangci.sh") ;;
esac

# 2. The corpus, as a main module of its own, its dependencies downloaded
#    and compiled (so that every measured run hits the compile cache; the
#    first round would otherwise pay for compiling test dependencies).
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
# Compile everything that vet will read export data of, test variants
# included, with a go vet run that is not measured.
go vet -vettool="$out/bin/noopvet" ./... >/dev/null
echo "corpus: $corpus: $(go list ./... | wc -l) packages, $(go list -deps ./... | wc -l) with dependencies" >&2

cat >"$out/golangci.yml" <<'YML'
version: "2"
linters:
  default: none
  enable: [depguard, forbidigo]
  settings:
    depguard:
      rules:
        vendors:
          deny:
            - {pkg: net/http, desc: an HTTP client in the write path}
            - {pkg: github.com/openai, desc: a model SDK in the write path}
            - {pkg: github.com/sashabaranov/go-openai, desc: a model SDK in the write path}
            - {pkg: github.com/anthropics, desc: a model SDK in the write path}
            - {pkg: google.golang.org/genai, desc: a model SDK in the write path}
            - {pkg: github.com/tmc/langchaingo, desc: a model SDK in the write path}
    forbidigo:
      forbid:
        - pattern: ^time\.(Now|Since|Until)$
      analyze-types: true
run:
  tests: true
issues:
  max-issues-per-linter: 0
  max-same-issues: 0
YML

cat >"$out/golangci-lg.yml" <<'YML'
version: "2"
linters:
  default: none
  enable: [leaseguard]
  settings:
    custom:
      leaseguard:
        type: module
run:
  tests: true
issues:
  max-issues-per-linter: 0
  max-same-issues: 0
YML

# salted TOOL: a copy of TOOL with a fresh identity, for one cold vet run.
salted() {
	s=$(date +%s%N)-$$
	cp "$1" "$out/bin/salted-$s"
	printf '\nsalt %s\n' "$s" >>"$out/bin/salted-$s"
	echo "$out/bin/salted-$s"
}

# measure NAME CMD...: runs CMD, appends "round name seconds maxrss_kib exit" to runs.tsv.
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %M %x' -o "$out/time.txt" "$@" >"$out/$name.out" 2>&1 || true
	# shellcheck disable=SC2046 # three fields
	set -- $(tail -n 1 "$out/time.txt")
	printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$1" "$2" "$3" >>"$out/runs.tsv"
	echo "round $round $name: ${1}s, $(($2 / 1024)) MiB, exit $3" >&2
}

run() {
	case $1 in
	noop) t=$(salted "$out/bin/noopvet"); measure noop go vet -vettool="$t" ./...; rm -f "$t" ;;
	leaseguard) t=$(salted "$out/bin/leaseguard"); measure leaseguard go vet -vettool="$t" ./...; rm -f "$t" ;;
	lg-gogc100) t=$(salted "$out/bin/leaseguard"); measure lg-gogc100 env GOGC=100 go vet -vettool="$t" ./...; rm -f "$t" ;;
	vet) t=$(salted "$(go env GOTOOLDIR)/vet"); measure vet go vet -vettool="$t" ./...; rm -f "$t" ;;
	standalone) measure standalone "$out/bin/leaseguard" ./... ;;
	standalone-lease) measure standalone-lease "$out/bin/leaseguard" -lease.packages="$lease" ./... ;;
	golist) measure golist go list ./... ;;
	golangci) rm -rf "$out/gcl-cache"; measure golangci env GOLANGCI_LINT_CACHE="$out/gcl-cache" "$gcl" run --config "$out/golangci.yml" ./... ;;
	golangci-lg) rm -rf "$out/gcl-cache"; measure golangci-lg env GOLANGCI_LINT_CACHE="$out/gcl-cache" "$gcl" run --config "$out/golangci-lg.yml" ./... ;;
	esac
}

: >"$out/runs.tsv"
round=1
while [ "$round" -le "$pairs" ]; do
	# Rotate the order, so that no contender always runs after the same one.
	set -- $contenders
	i=1
	while [ "$i" -lt "$round" ]; do first=$1; shift; set -- "$@" "$first"; i=$((i + 1)); done
	for c in "$@"; do run "$c"; done
	round=$((round + 1))
done

# Summary: median seconds and MiB per contender, and the medians over rounds
# of each contender's time and peak memory divided by noop's in the same
# round.
awk -F'\t' '
{ t[$2, $1] = $3; m[$2, $1] = $4; names[$2] = 1; if ($1 > rounds) rounds = $1 }
function median(a, n,   i, j, x) {
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	printf "%-12s %10s %8s %12s %8s\n", "contender", "median s", "x noop", "median MiB", "x noop"
	for (c in names) {
		for (r = 1; r <= rounds; r++) {
			s[r] = t[c, r]; k[r] = m[c, r] / 1024
			q[r] = t[c, r] / t["noop", r]; p[r] = m[c, r] / m["noop", r]
		}
		printf "%-12s %10.1f %8.2f %12.0f %8.2f\n", c, median(s, rounds), median(q, rounds), median(k, rounds), median(p, rounds)
	}
}' "$out/runs.tsv"
