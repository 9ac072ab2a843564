package version

import (
	"runtime/debug"
	"testing"

	"golang.org/x/mod/semver"
)

func TestVersionIsSemver(t *testing.T) {
	if !semver.IsValid(Version) || semver.Canonical(Version) != Version || semver.Prerelease(Version) != "" {
		t.Errorf("Version %q is not a release version vMAJOR.MINOR.PATCH", Version)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"built outside a repository", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Version},
		{"go install at the release", debug.BuildInfo{Main: debug.Module{Version: Version}}, Version},
		{"go install of a later commit", debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261207054012-4c1f2e3d4b5a"}},
			Version + " module=v0.1.1-0.20261207054012-4c1f2e3d4b5a"},
		{"a clone with changes", debug.BuildInfo{
			Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{
				{Key: "CGO_ENABLED", Value: "1"},
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "4c1f2e3d4b5a"},
				{Key: "vcs.time", Value: "2026-12-07T05:40:12Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, Version + " vcs.revision=4c1f2e3d4b5a vcs.time=2026-12-07T05:40:12Z vcs.modified=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(&tc.bi); got != tc.want {
				t.Errorf("describe = %q, want %q", got, tc.want)
			}
		})
	}
}
