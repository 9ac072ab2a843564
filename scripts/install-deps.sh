#!/bin/sh
# scripts/install-deps.sh
#
# Installs what the test suite needs beyond Go, from Debian's packages, when
# it is missing: the PostgreSQL server binaries (for the tests' throwaway
# cluster) and pre-commit (for the end-to-end test of the hooks). It needs
# root for apt-get; without it, it says what to install.
set -eu
need=
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	need="$need postgresql"
fi
command -v pre-commit >/dev/null 2>&1 || need="$need pre-commit"
[ -n "$need" ] || exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "the test suite needs:$need (Debian packages); install them and run again" >&2
	exit 1
fi
apt-get update
# shellcheck disable=SC2086 # a list of package names
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need
