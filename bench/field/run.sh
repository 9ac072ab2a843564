#!/bin/sh
# bench/field/run.sh [ENTRY...]
#
# Scores leaseguard on public lease packages against labels that a reviewer
# wrote by reading their code: bench/field/ENTRY.tsv (all entries by
# default; the format is in bench/field/README.md).
#
# For each entry: a scratch module in $OUT/ENTRY/mod that requires the
# pinned modules (through the Go module proxy, with the test dependencies of
# the entry's packages), then leaseguard -json on the entry's packages twice:
#   default     -lease.packages=PACKAGES alone
#   configured  the same plus the entry's "# configured:" flags, the lease
#               table and columns set as a user would set them
# and bench/field/score compares the findings with the labels. Nothing from
# the modules is copied into the repository: they stay in the module cache,
# the scratch modules and the outputs in $OUT
# (${LEASEGUARD_FIELD_DIR:-/tmp/leaseguard-field}).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${LEASEGUARD_FIELD_DIR:-/tmp/leaseguard-field}
mkdir -p "$out/bin"

# 1. The tools, built as the repository's go.mod says.
(cd "$root" && go build -o "$out/bin/leaseguard" ./cmd/leaseguard && go build -o "$out/bin/score" ./bench/field/score)

# The scratch modules record what they load in their own go.mod and go.sum.
export GOFLAGS=-mod=mod GOWORK=off

if [ $# -eq 0 ]; then
	for f in "$here"/*.tsv; do set -- "$@" "$(basename "$f" .tsv)"; done
fi

# header FILE KEY: the values of "# KEY:" lines, one a line (a module line's
# trailing comment dropped).
header() {
	sed -n "s/^# $2:[[:space:]]*//p" "$1" | sed 's/[[:space:]]*$//'
}

labels=
for entry in "$@"; do
	file=$here/$entry.tsv
	if [ ! -f "$file" ]; then
		echo "run.sh: no labels file $file" >&2
		exit 2
	fi
	labels="$labels $file"
	modules=$(header "$file" module | awk '{print $1}')
	packages=$(header "$file" packages | tr '\n' ' ')
	configured=$(header "$file" configured | tr '\n' ' ')
	tags=$(header "$file" tags | tr '\n' ',' | sed 's/,$//')
	replaces=$(header "$file" replace | awk '{print $1}')
	dir=$out/$entry

	# 2. The scratch module, made anew so that it follows the pins.
	rm -rf "$dir"
	mkdir -p "$dir/mod"
	# Each package at the version of the module that holds it (the
	# longest module path that is a prefix of it): go get -t adds the
	# modules and the test dependencies that loading the packages' tests
	# needs.
	gets=
	for p in $packages; do
		best=
		for m in $modules; do
			path=${m%@*}
			case $p in "$path" | "$path"/*)
				if [ ${#path} -gt ${#best} ]; then best=$path; version=${m##*@}; fi ;;
			esac
		done
		if [ -z "$best" ]; then
			echo "run.sh: $entry: no '# module:' line holds package $p" >&2
			exit 2
		fi
		gets="$gets $p@$version"
	done
	(
		cd "$dir/mod"
		go mod init "leaseguard.field/$(echo "$entry" | tr -c 'a-zA-Z0-9.\n' '-')" 2>/dev/null
		# The module's own replace directives that its packages need: go
		# applies only the main module's, so the scratch module repeats them.
		for r in $replaces; do go mod edit -replace "$r"; done
		# shellcheck disable=SC2086 # one argument a package
		go get -t $gets
		for m in $modules; do
			go list -m -f '{{.Path}}	{{.Dir}}' "${m%@*}"
		done >"$dir/modules.tsv"
	) >"$dir/setup.log" 2>&1 || {
		echo "run.sh: $entry: setting up the scratch module failed:" >&2
		tail -n 20 "$dir/setup.log" >&2
		exit 1
	}

	# 3. The runs. With -json leaseguard exits 0 with findings and 1 when
	#    the tool failed; score says so for a failed run.
	lease=$(echo $packages | tr ' ' ',')
	for mode in default configured; do
		flags=
		if [ "$mode" = configured ]; then flags=$configured; fi
		# shellcheck disable=SC2086 # flags and packages are lists
		(cd "$dir/mod" && GOFLAGS="$GOFLAGS${tags:+ -tags=$tags}" "$out/bin/leaseguard" -json "-lease.packages=$lease" $flags $packages) \
			>"$dir/$mode.json" 2>"$dir/$mode.err" ||
			echo "run.sh: $entry $mode: leaseguard exited $? (see $dir/$mode.err)" >&2
	done
done

# 4. The scores.
# shellcheck disable=SC2086 # one argument a labels file
"$out/bin/score" -dir "$out" $labels
