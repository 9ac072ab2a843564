#!/bin/sh
# bench/units.sh TOOL [DIR [PATTERN]]
#
# Where a vet tool's time goes, package by package: runs go vet with a
# salted copy of TOOL (every vet action reruns, every compile action hits)
# in DIR (default: the prometheus corpus that bench/vet.sh set up) on
# PATTERN (default ./...), through a wrapper that records, for each vet
# unit (one package, in a process of its own), its wall and CPU seconds,
# peak memory and import path. Prints the totals and the ten units that
# took longest; the table is in $LEASEGUARD_BENCH_DIR/units-NAME.tsv for
# comparing two tools (join on the last column).
#
# This is how the largest cost was found: one generated package
# (github.com/aws/aws-sdk-go-v2/service/ec2) held most of the SSA time and
# set the peak memory of the whole run.
set -eu
[ $# -ge 1 ] || { echo "usage: bench/units.sh TOOL [DIR [PATTERN]]" >&2; exit 2; }
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${LEASEGUARD_BENCH_DIR:-${TMPDIR:-/tmp}/leaseguard-bench}
dir=${2:-$out/corpus-github.com_prometheus_prometheus_v0.316.0}
pattern=${3:-./...}
[ -d "$dir" ] || { echo "bench/units.sh: no $dir: run bench/vet.sh first, or name a module directory" >&2; exit 2; }
mkdir -p "$out/bin"

s=$(date +%s%N)-$$
salted=$out/bin/units-$s
wrapper=$out/bin/units-wrap-$s
trap 'rm -f "$salted" "$wrapper"' EXIT
cp "$tool" "$salted"
printf '\nsalt %s\n' "$s" >>"$salted"
table=$out/units-$(basename "$tool").tsv
: >"$table"
cat >"$wrapper" <<EOF
#!/bin/sh
for last; do :; done
case \$last in
*.cfg)
	pkg=\$(sed -n 's/^[[:space:]]*"ImportPath": "\\(.*\\)",\$/\\1/p' "\$last" | head -n 1)
	exec /usr/bin/time -a -o "$table" -f "%e	%U	%S	%M	\$pkg" "$salted" "\$@" ;;
esac
exec "$salted" "\$@"
EOF
chmod +x "$wrapper"

cd "$dir"
GOFLAGS=-mod=mod GOWORK=off /usr/bin/time -f '%e s wall, %M KiB peak (go vet)' go vet -vettool="$wrapper" "$pattern" >/dev/null 2>"$out/units.err" || true
tail -n 1 "$out/units.err"
awk -F'\t' '{w += $1; c += $2 + $3; if ($4 > m) m = $4} END {printf "%d units: %.1f s wall, %.1f s CPU in all; largest %d MiB\n", NR, w, c, m / 1024}' "$table"
sort -t "$(printf '\t')" -k1,1 -rn "$table" | head -n 10 |
	awk -F'\t' '{printf "%8.2f s %6.2f s CPU %6d MiB  %s\n", $1, $2 + $3, $4 / 1024, $5}'
