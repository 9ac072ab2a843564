#!/bin/sh
# The whole test suite: formatting, vet, leaseguard and golangci-lint (built
# with the leaseguard plugin, cached) over this repository, and every test,
# the end-to-end ones included (the PostgreSQL ones against a throwaway
# cluster that the tests start, or $LEASE_DATABASE_URL), and leasepkg's
# negative controls, which need leasepkg.Weaken (the leaseguard_weaken tag).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh

unformatted=$(git ls-files '*.go' | grep -v '/testdata/' | xargs gofmt -l)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" "$unformatted" >&2
	exit 1
fi
go vet ./...
go run ./cmd/leaseguard ./...
"$(scripts/golangci.sh)" run ./...
go test -race -count=1 -timeout 45m -tags e2e,leaseguard_weaken ./...
