#!/bin/sh
# bench/crashhunt.sh [MODULE@VERSION | std ...]
#
# Runs go vet -vettool=leaseguard with every package marked a lease package
# (-lease.packages=...), so that every rule runs on every package, test
# variants and dependencies included, over real code that no one here
# wrote, and reports what breaks. Each module is fetched through the module
# proxy and made the main module of a scratch directory (as bench/vet.sh
# does); std is the standard library. Default: std and four pinned
# SQL-heavy modules.
#
# Per module: vet units (tool runs on one package each), wall time and peak
# memory of go vet (/usr/bin/time -v: the largest process of the tree),
# findings (diagnostic lines), and failures: units that died (a panic or a
# signal: exit status 2 or more), facts-only units that failed (they fail
# silently otherwise), and lines of the output that tell of a crash or an
# internal error ("panic:", "fatal error:", "SIGSEGV", "internal error",
# "failed prerequisites"). Exits 1 if any module had a failure.
#
# LEASEGUARD names the tool to run (default: built from this checkout).
# Each module defeats the vet result cache with a freshly salted copy of
# the tool, so that all of its units run, its dependencies' included, and
# the figures do not depend on which modules ran before. Logs: $LEASEGUARD_BENCH_DIR/crashhunt/.
set -eu
[ $# -gt 0 ] || set -- std github.com/jackc/pgx/v5@v5.13.0 github.com/riverqueue/river@v0.51.2 \
	github.com/jmoiron/sqlx@v1.4.0 gorm.io/gorm@v1.31.2
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}/crashhunt
mkdir -p "$out/bin"

# 1. The tool, salted afresh for each module, behind a wrapper that
#    records each unit's exit status, whether it ran for facts only, and
#    its package.
if [ -n "${LEASEGUARD:-}" ]; then
	tool=$LEASEGUARD
else
	tool=$out/bin/leaseguard
	(cd "$root" && go build -o "$tool" ./cmd/leaseguard)
fi

salted=$out/bin/leaseguard-salted-$$
wrapper=$out/bin/wrap-$$
trap 'rm -f "$salted" "$wrapper"' EXIT
# salt gives the tool a new identity, so that go vet's cache misses: each
# module's units, its dependencies' included, all run again.
salt() {
	cp "$tool" "$salted"
	printf '\nsalt %s-%s\n' "$(date +%s%N)" "$$" >>"$salted"
}
cat >"$wrapper" <<WRAP
#!/bin/sh
for last; do :; done
case \$last in
*.cfg)
	"$salted" "\$@"
	rc=\$?
	pkg=\$(sed -n 's/^[[:space:]]*"ImportPath": "\\(.*\\)",\$/\\1/p' "\$last" | head -n 1)
	only=\$(grep -c '"VetxOnly": true' "\$last")
	printf '%s\t%s\t%s\n' "\$rc" "\$only" "\$pkg" >>"\$LEASEGUARD_UNITS"
	exit \$rc ;;
esac
exec "$salted" "\$@"
WRAP
chmod +x "$wrapper"

# 2. Each module in turn (the machines are small: never two at once).
failed=0
printf '%-40s %6s %9s %9s %9s %7s %9s\n' module units wall peak findings died internal
for m in "$@"; do
	name=$(echo "$m" | tr '/@' '__')
	log=$out/$name.log
	units=$out/$name.units
	: >"$units"
	salt
	if [ "$m" = std ]; then
		dir=$out/std # outside any module: go vet std
		mkdir -p "$dir"
		pattern=std
		flags=
	else
		dir=$out/mod-$name
		if [ ! -d "$dir" ]; then
			src=$(cd "$out" && GOFLAGS= go mod download -json "$m" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
			rm -rf "$dir.tmp"
			cp -R "$src" "$dir.tmp"
			chmod -R u+w "$dir.tmp"
			mv "$dir.tmp" "$dir"
		fi
		(cd "$dir" && GOFLAGS=-mod=mod GOWORK=off go mod download)
		pattern=./...
		flags=-mod=mod
	fi
	(cd "$dir" && GOFLAGS=$flags GOWORK=off LEASEGUARD_UNITS=$units \
		/usr/bin/time -v -o "$log.time" go vet -vettool="$wrapper" -lease.packages=... "$pattern" >"$log" 2>&1) || true
	n=$(wc -l <"$units")
	wall=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log.time")
	peak=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$log.time")
	findings=$(grep -cE '^[^[:space:]#][^[:space:]]*\.go:[0-9]+:[0-9]+: [^	]' "$log" || true)
	died=$(awk -F'\t' '$1 >= 2 || ($2 > 0 && $1 != 0)' "$units" | wc -l)
	internal=$(grep -cE 'panic:|fatal error:|SIGSEGV|signal: |internal error|failed prerequisites' "$log" || true)
	printf '%-40s %6d %9s %6d MiB %9d %7d %9d\n' "$m" "$n" "$wall" "$((peak / 1024))" "$findings" "$died" "$internal"
	if [ "$died" -gt 0 ] || [ "$internal" -gt 0 ] || [ "$n" -eq 0 ]; then
		failed=1
		awk -F'\t' '$1 >= 2 || ($2 > 0 && $1 != 0) {print "  unit failed (exit " $1 "): " $3}' "$units" | head -n 20
		grep -nE 'panic:|fatal error:|SIGSEGV|signal: |internal error|failed prerequisites' "$log" | head -n 20 | sed 's/^/  /'
		echo "  log: $log"
	fi
done
exit $failed
