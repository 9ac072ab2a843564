// Package version says which leaseguard a binary is: the version kept in
// the source tree, and what the Go build info adds (the VCS revision, or
// the module version that go install fetched).
package version

import (
	"runtime/debug"
	"strings"
)

// Version is the version of this source tree: the tag of the release made
// from it, and between releases the last release's. Tags do not travel
// with every clone, so a build knows its version from here; the docs'
// install and pre-commit lines name it (internal/testdir checks them), and
// scripts/release.sh tags it (CONTRIBUTING.md, Releases).
const Version = "v0.1.0"

// String returns Version and what the build info says of the build, as
// space-separated key=value words: the module's version when it is not
// Version (a pseudo-version of a later commit, or what go install
// fetched), the VCS revision and commit time and whether the tree had
// changes (in a build from a clone, unless -buildvcs=false); for example
// "v0.1.0 vcs.revision=4c1f… vcs.time=2026-12-07T05:40:12Z vcs.modified=true".
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	return describe(bi)
}

func describe(bi *debug.BuildInfo) string {
	words := []string{Version}
	if v := bi.Main.Version; v != "" && v != "(devel)" && v != Version {
		words = append(words, "module="+v)
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			words = append(words, s.Key+"="+s.Value)
		}
	}
	return strings.Join(words, " ")
}
