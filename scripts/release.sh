#!/bin/sh
# scripts/release.sh
#
# Tags a release: the annotated tag that internal/version.Version names,
# on the commit checked out, once the tree is clean, the tag is new, the
# docs name that version (TestDocsVersion) and the command builds with and
# without cgo. It pushes nothing: it prints the command that publishes the
# tag. The steps around it are in CONTRIBUTING.md, Releases.
set -eu
cd "$(dirname "$0")/.."
v=$(sed -n 's/^const Version = "\(v[0-9][^"]*\)"$/\1/p' internal/version/version.go)
if [ -z "$v" ]; then
	echo "internal/version/version.go has no const Version = \"v…\"" >&2
	exit 1
fi
if [ -n "$(git status --porcelain)" ]; then
	echo "the tree has changes; commit them before tagging $v" >&2
	exit 1
fi
if git rev-parse -q --verify "refs/tags/$v" >/dev/null; then
	echo "tag $v exists already, at $(git rev-list -n 1 "$v"); set Version to the next version" >&2
	exit 1
fi
go test -count=1 -run 'TestDocsVersion|TestVersionIsSemver' ./internal/testdir ./internal/version
go build -o /dev/null ./cmd/leaseguard
CGO_ENABLED=0 go build -o /dev/null ./cmd/leaseguard
git tag -a "$v" -m "leaseguard $v"
echo "tagged $v at $(git rev-parse --short HEAD); publish it: git push origin $v"
