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
#   lg-static   go vet -vettool=leaseguard built as a static executable
#               (go build -ldflags=-extldflags=-static, Linux with glibc's
#               static library): without the dynamic loader each vet unit's
#               process starts sooner
#   vet         go vet with its default analyzers
#   standalone  leaseguard ./... (its own loader, no vet cache); the corpus
#               has no lease package, so this is the package listing alone
#   standalone-lease
#               leaseguard -lease.packages=$LEASEGUARD_BENCH_LEASE ./...
#               (default github.com/prometheus/prometheus/tsdb) with a salted
#               copy of leaseguard: one lease package, analysed with its
#               imports, every vet action of its graph rerun (cold)
#   precommit-lease
#               what the default pre-commit hook runs, the same command
#               with leaseguard as installed (its results cached by go vet
#               from a run before the rounds), after an edit (a comment
#               line inserted at its top, removed after the run) to a file
#               of the lease package, $LEASEGUARD_BENCH_LEASE_FILE (default
#               tsdb/head.go)
#   precommit-other
#               the same after an edit to a file that the lease package
#               does not depend on, $LEASEGUARD_BENCH_OTHER_FILE (default
#               notifier/manager.go)
#   golist      go list ./...: what a run on a repository without a lease
#               package is compared with
#   golangci    golangci-lint with depguard and forbidigo set up to approximate
#               the imports and clock rules, with a fresh golangci-lint cache
#   golangci-lg the same golangci-lint binary (built with the leaseguard
#               plugin) running leaseguard alone, with a fresh cache
#   golangci-lg-lease
#               the same with $LEASEGUARD_BENCH_LEASE named in the plugin's
#               lease.packages setting: what a repository with a lease
#               package pays for the rules' facts
# LEASEGUARD_BENCH_CONTENDERS picks some of them (default: all), e.g.
# "noop leaseguard" for the paired ratio against the floor alone.
# Every go vet run defeats the vet result cache with a salted copy of its
# tool (a copy with bytes appended has another content hash, which -V=full
# reports and the go command keys vet results on): every vet action,
# dependencies' facts-only ones included, reruns; every compile action
# still hits. Wall time and peak memory (max RSS of the process tree's
# largest process, /usr/bin/time -v) per run go to $OUT/runs.tsv; the
# summary prints medians, the median of paired ratios against noop, and
# against a peer where one is the measure: golangci-lg against golangci,
# standalone against golist.
set -eu
pairs=${1:-5}
corpus=${2:-github.com/prometheus/prometheus@v0.316.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
mkdir -p "$out/bin"

# 1. The tools.
(cd "$root" && go build -o "$out/bin/leaseguard" ./cmd/leaseguard && go build -o "$out/bin/noopvet" ./bench/noopvet)
case " ${LEASEGUARD_BENCH_CONTENDERS:-} " in
*" lg-static "*) (cd "$root" && go build -ldflags=-extldflags=-static -o "$out/bin/leaseguard-static" ./cmd/leaseguard) ;;
esac
contenders=${LEASEGUARD_BENCH_CONTENDERS:-noop leaseguard lg-gogc100 vet standalone standalone-lease precommit-lease precommit-other golist golangci golangci-lg golangci-lg-lease}
lease=${LEASEGUARD_BENCH_LEASE:-github.com/prometheus/prometheus/tsdb}
leasefile=${LEASEGUARD_BENCH_LEASE_FILE:-tsdb/head.go}
otherfile=${LEASEGUARD_BENCH_OTHER_FILE:-notifier/manager.go}
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
sed "s|        type: module|        type: module\\
        settings: {lease: {packages: [$lease]}}|" "$out/golangci-lg.yml" >"$out/golangci-lg-lease.yml"

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

# edited FILE CMD...: runs CMD with a comment line inserted at the top of
# FILE, then puts FILE back. Every declaration after it moves down a line,
# so the package's export data changes, as it does after most real edits,
# and whatever imports the package is compiled again.
edited() {
	f=$1
	shift
	cp "$f" "$out/edited.orig"
	{ printf '// edited for bench/vet.sh %s\n' "$(date +%s%N)"; cat "$out/edited.orig"; } >"$f"
	"$@"
	cp "$out/edited.orig" "$f"
}

run() {
	case $1 in
	noop) t=$(salted "$out/bin/noopvet"); measure noop go vet -vettool="$t" ./...; rm -f "$t" ;;
	leaseguard) t=$(salted "$out/bin/leaseguard"); measure leaseguard go vet -vettool="$t" ./...; rm -f "$t" ;;
	lg-gogc100) t=$(salted "$out/bin/leaseguard"); measure lg-gogc100 env GOGC=100 go vet -vettool="$t" ./...; rm -f "$t" ;;
	lg-static) t=$(salted "$out/bin/leaseguard-static"); measure lg-static go vet -vettool="$t" ./...; rm -f "$t" ;;
	vet) t=$(salted "$(go env GOTOOLDIR)/vet"); measure vet go vet -vettool="$t" ./...; rm -f "$t" ;;
	standalone) measure standalone "$out/bin/leaseguard" ./... ;;
	standalone-lease) t=$(salted "$out/bin/leaseguard"); measure standalone-lease "$t" -lease.packages="$lease" ./...; rm -f "$t" ;;
	precommit-lease) edited "$leasefile" measure precommit-lease "$out/bin/leaseguard" -lease.packages="$lease" ./... ;;
	precommit-other) edited "$otherfile" measure precommit-other "$out/bin/leaseguard" -lease.packages="$lease" ./... ;;
	golist) measure golist go list ./... ;;
	golangci) rm -rf "$out/gcl-cache"; measure golangci env GOLANGCI_LINT_CACHE="$out/gcl-cache" "$gcl" run --config "$out/golangci.yml" ./... ;;
	golangci-lg) rm -rf "$out/gcl-cache"; measure golangci-lg env GOLANGCI_LINT_CACHE="$out/gcl-cache" "$gcl" run --config "$out/golangci-lg.yml" ./... ;;
	golangci-lg-lease) rm -rf "$out/gcl-cache"; measure golangci-lg-lease env GOLANGCI_LINT_CACHE="$out/gcl-cache" "$gcl" run --config "$out/golangci-lg-lease.yml" ./... ;;
	esac
}

case " $contenders " in
*" precommit-"*)
	# The pre-commit contenders run warm: go vet has the results of the
	# lease package's graph from this run.
	[ -f "$leasefile" ] && [ -f "$otherfile" ] || { echo "bench/vet.sh: no $leasefile or $otherfile in the corpus" >&2; exit 2; }
	"$out/bin/leaseguard" -lease.packages="$lease" ./... >/dev/null 2>&1 || true ;;
esac

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
	peer["golangci-lg"] = "golangci"; peer["golangci-lg-lease"] = "golangci"; peer["standalone"] = "golist"
	printf "%-17s %9s %7s %11s %7s  %s\n", "contender", "median s", "x noop", "median MiB", "x noop", "x peer (time, memory)"
	for (c in names) {
		for (r = 1; r <= rounds; r++) {
			s[r] = t[c, r]; k[r] = m[c, r] / 1024
			q[r] = ("noop" in names) ? t[c, r] / t["noop", r] : 0; p[r] = ("noop" in names) ? m[c, r] / m["noop", r] : 0
			if ((c in peer) && (peer[c] in names)) { pq[r] = t[c, r] / t[peer[c], r]; pp[r] = m[c, r] / m[peer[c], r] }
		}
		vs = (c in peer) && (peer[c] in names) ? sprintf("%.2f, %.2f x %s", median(pq, rounds), median(pp, rounds), peer[c]) : ""
		xt = ("noop" in names) ? sprintf("%.2f", median(q, rounds)) : "-"
		xm = ("noop" in names) ? sprintf("%.2f", median(p, rounds)) : "-"
		printf "%-17s %9.1f %7s %11.0f %7s  %s\n", c, median(s, rounds), xt, median(k, rounds), xm, vs
	}
}' "$out/runs.tsv"
