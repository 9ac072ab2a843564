#!/bin/sh
# The whole test suite: formatting, vet, leaseguard and golangci-lint (built
# with the leaseguard plugin, cached) over this repository, and every test,
# the end-to-end ones included (the PostgreSQL ones against a throwaway
# cluster that the tests start, or $LEASE_DATABASE_URL), and leasepkg's
# negative controls, which need leasepkg.Weaken (the leaseguard_weaken tag);
# all on PostgreSQL 15 (or the version LEASE_PG_VERSION names), and the
# lease package's tests and the fault suite on 18 as well.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh

unformatted=$(git ls-files '*.go' | grep -v '/testdata/' | xargs gofmt -l)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" "$unformatted" >&2
	exit 1
fi
go vet ./...
(cd leasepkg/leaseprom && go vet ./...)
go run ./cmd/leaseguard ./...
"$(scripts/golangci.sh)" run ./...
# leasepkg/leaseprom is a module of its own, so that neither leasepkg nor
# the analyzer (and golangci-lint built with it) requires Prometheus.
(cd leasepkg/leaseprom && go test -race -count=1 -timeout 10m ./...)
go test -race -count=1 -timeout 45m -tags e2e,leaseguard_weaken ./...
# The lease package's tests and the fault suite again on the newest
# PostgreSQL, 18 (install-deps.sh's prebuilt binaries), in a cluster of
# their own whatever LEASE_DATABASE_URL says.
env -u LEASE_DATABASE_URL LEASE_PG_VERSION=18 \
	go test -race -count=1 -timeout 30m -tags e2e,leaseguard_weaken ./leasepkg/... ./internal/faults/...
