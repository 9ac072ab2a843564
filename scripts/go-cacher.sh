#!/bin/sh
# scripts/go-cacher.sh
#
# Builds, or finds in the cache, go-cacher and go-cacher-server from
# github.com/bradfitz/go-tool-cache, the reference GOCACHEPROG program and
# the HTTP server through which it shares a Go cache between machines, at a
# pinned version from the Go module proxy, and prints the directory that
# holds them. The directory lives under the Go build cache, as
# scripts/golangci.sh keeps golangci-lint, keyed by the version: a cold
# build takes under a minute, a cached one none. The end-to-end test of a
# shared cache (cmd/leaseguard) and bench/cache.sh use them.
set -eu
version=v0.0.0-20260722201841-0bb331e19f64
cache=${LEASEGUARD_CACHE:-$(go env GOCACHE)/leaseguard}/go-tool-cache-$version
if [ ! -x "$cache/go-cacher" ] || [ ! -x "$cache/go-cacher-server" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	GOBIN=$tmp go install \
		"github.com/bradfitz/go-tool-cache/cmd/go-cacher@$version" \
		"github.com/bradfitz/go-tool-cache/cmd/go-cacher-server@$version" >&2
	# One rename each, so that a concurrent run sees a whole binary or none.
	mv "$tmp/go-cacher" "$cache/go-cacher"
	mv "$tmp/go-cacher-server" "$cache/go-cacher-server"
fi
echo "$cache"
