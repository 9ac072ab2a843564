#!/bin/sh
# scripts/pre-commit-hook.sh [vet] ARGS...
#
# The entry of the pre-commit hooks (.pre-commit-hooks.yaml), run by
# pre-commit from its clone of this repository at the rev a user names,
# in the user's repository. It builds the leaseguard command of that clone
# with the Go on PATH, once per Go version, beside itself (the clone is
# pre-commit's, at one rev, and goes with it), then runs it on ARGS:
# standalone, or with "vet" as go vet's vet tool.
#
# pre-commit's golang language would run go install ./... in the clone:
# every main package of the module, the examples and benchmarks included
# (6 minutes and 450 MB on a cold machine), in a GOPATH of its own. This
# builds only the command, with the user's module and build caches.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$src/.pre-commit-bin/leaseguard-$(go env GOVERSION)
if [ ! -x "$bin" ]; then
	mkdir -p "$(dirname "$bin")"
	tmp=$(mktemp "$bin.XXXXXX")
	trap 'rm -f "$tmp"' EXIT
	(cd "$src" && GOWORK=off go build -trimpath -o "$tmp" ./cmd/leaseguard)
	mv "$tmp" "$bin" # whole, or not there: a second hook run at once builds its own
	trap - EXIT
fi
if [ "${1:-}" = vet ]; then
	shift
	exec go vet -vettool="$bin" "$@"
fi
exec "$bin" "$@"
