//go:build e2e

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/internal/version"
)

// TestVersionFromClone builds leaseguard in a fresh clone of this
// repository, as a user who clones it does (the go command stamps the VCS
// revision into a build from a clone, not from a git worktree), and checks
// that -V=full names the version and the commit.
func TestVersionFromClone(t *testing.T) {
	repo := testdir.Repo()
	clone := filepath.Join(t.TempDir(), "leaseguard")
	if out, err := exec.Command("git", "clone", "-q", repo, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	rev, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "leaseguard")
	build := exec.Command("go", "build", "-buildvcs=true", "-trimpath", "-o", bin, "./cmd/leaseguard")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := run(t, ".", bin, "-V=full")
	for _, want := range []string{" version devel " + version.Version + " ", " vcs.revision=" + strings.TrimSpace(string(rev)) + " ", " vcs.modified=false "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("-V=full of a build from a clone: %q, want %q in it", r.stdout, want)
		}
	}
}
