#!/bin/sh
# scripts/golangci.sh
#
# Builds, or finds in the cache, a golangci-lint binary with the leaseguard
# plugin (golangci-lint custom, driven by .custom-gcl.yml), and prints its
# path. The cache lives under the Go build cache, keyed by the golangci-lint
# version and a hash of the sources that go into the plugin, so a second run
# costs seconds: a cold build takes about ten minutes on two cores.
#
# golangci-lint custom clones golangci-lint's source with git from its public
# host. Where that host cannot be reached, this script gives git a local
# repository made from the module cache's copy of the same version, through
# GIT_CONFIG_* (golangci-lint passes GIT_* on to git). On a normal network
# that only saves the clone.
set -eu
cd "$(dirname "$0")/.."
version=v2.15.0
cache=${LEASEGUARD_CACHE:-$(go env GOCACHE)/leaseguard}/golangci-$version
mkdir -p "$cache"

# The sources that go into the binary: the plugin's packages, not their tests.
set -- go.mod go.sum .custom-gcl.yml analyzer plugin internal/depcheck ':(exclude)*_test.go' ':(exclude)**/testdata/**'
key=$(git ls-files -s -- "$@" | git hash-object --stdin)
if ! git diff --quiet -- "$@" || [ -n "$(git ls-files --others --exclude-standard -- "$@")" ]; then
	# Uncommitted changes: key on their content too.
	key=$key-$( (git diff -- "$@"; git ls-files --others --exclude-standard -z -- "$@" | xargs -0r cat) | git hash-object --stdin)
fi
bin=$cache/custom-gcl-$key
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

# 1. golangci-lint itself, which has the custom command.
if [ ! -x "$cache/golangci-lint" ]; then
	GOBIN=$cache go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version" >&2
fi

# 2. A local git repository of golangci-lint at that version.
mirror=$cache/golangci-lint.git
if [ ! -d "$mirror/.git" ]; then
	src=$(go mod download -json "github.com/golangci/golangci-lint/v2@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	rm -rf "$mirror.tmp"
	cp -R "$src" "$mirror.tmp"
	chmod -R u+w "$mirror.tmp"
	git -C "$mirror.tmp" init -q
	git -C "$mirror.tmp" add -A
	git -C "$mirror.tmp" -c user.name=leaseguard -c user.email=leaseguard@localhost commit -q -m "golangci-lint $version"
	git -C "$mirror.tmp" tag "$version"
	mv "$mirror.tmp" "$mirror"
fi

# 3. The custom build.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
GIT_CONFIG_COUNT=1 \
GIT_CONFIG_KEY_0="url.file://$mirror.insteadOf" \
GIT_CONFIG_VALUE_0=https://github.com/golangci/golangci-lint.git \
	"$cache/golangci-lint" custom --destination "$out" >&2
mv "$out/custom-gcl" "$bin"
echo "$bin"
