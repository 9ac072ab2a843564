package testdir_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/internal/version"
)

// The places where the docs name a version of this repository: go install
// and go get -tool of the command, pre-commit's rev under this repository,
// and golangci-lint's plugin module.
var versionLines = []*regexp.Regexp{
	regexp.MustCompile("github\\.com/leaseguard/leaseguard/cmd/leaseguard@([^\\s`]+)"),
	regexp.MustCompile(`repo: https://github\.com/leaseguard/leaseguard\s*\n[\s#]*rev: (\S+)`),
	regexp.MustCompile(`module: github\.com/leaseguard/leaseguard\s*\n[\s#]*import: \S+\s*\n[\s#]*version: (\S+)`),
}

// TestDocsVersion checks that every install, pre-commit and plugin line of
// the docs names version.Version, the version that the release of this
// tree is tagged with (not @latest, nor a version that no tag carries),
// and that the newest version tag this clone has, if any, is not newer.
func TestDocsVersion(t *testing.T) {
	repo := testdir.Repo()
	files := []string{"README.md", "CONTRIBUTING.md", ".custom-gcl.yml"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(path string, _ fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repo, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	found := make([]int, len(versionLines))
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, re := range versionLines {
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				found[i]++
				if m[1] != version.Version {
					t.Errorf("%s: %q names %s, want %s (internal/version.Version)", f, m[0], m[1], version.Version)
				}
			}
		}
	}
	for i, n := range found {
		if n == 0 {
			t.Errorf("no line of the docs matches %s", versionLines[i])
		}
	}

	// Tags do not travel with every clone: with none, there is nothing
	// more to compare.
	out, err := exec.Command("git", "-C", repo, "tag", "--list", "v*").Output()
	if err != nil {
		t.Logf("git tag: %v; tags not compared", err)
		return
	}
	for tag := range strings.FieldsSeq(string(out)) {
		if semver.IsValid(tag) && semver.Compare(tag, version.Version) > 0 {
			t.Errorf("tag %s is newer than internal/version.Version %s: a release since this tree, or a Version left behind", tag, version.Version)
		}
	}
}
