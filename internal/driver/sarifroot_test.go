package driver

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSARIFRoot(t *testing.T) {
	repo := t.TempDir()
	module := filepath.Join(repo, "services", "shop")
	if err := os.MkdirAll(module, 0o755); err != nil {
		t.Fatal(err)
	}
	// A git worktree's .git is a file.
	if err := os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := sarifRootOf(module)
	if root.dir != repo {
		t.Fatalf("sarifRootOf(%s) = %s, want the repository %s", module, root.dir, repo)
	}
	if got, want := root.base().URI, "file://"+filepath.ToSlash(repo)+"/"; got != want {
		t.Errorf("base URI %q, want %q", got, want)
	}
	other := t.TempDir()
	for _, tc := range []struct {
		name, file, uri, baseID string
	}{
		{"in the module", filepath.Join(module, "lease", "renew.go"), "services/shop/lease/renew.go", srcRoot},
		{"in the repository, outside the module", filepath.Join(repo, "shared", "lease.go"), "shared/lease.go", srcRoot},
		{"a name that a URI escapes", filepath.Join(module, "my lease", "a#b.go"), "services/shop/my%20lease/a%23b.go", srcRoot},
		{"outside the repository", filepath.Join(other, "mod", "x.go"), "file://" + filepath.ToSlash(other) + "/mod/x.go", ""},
		{"beside the repository, a name that starts like it", repo + "-other/x.go", "file://" + filepath.ToSlash(repo) + "-other/x.go", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := root.artifact(tc.file)
			if a.URI != tc.uri || a.URIBaseID != tc.baseID {
				t.Errorf("artifact(%s) = %q from %q, want %q from %q", tc.file, a.URI, a.URIBaseID, tc.uri, tc.baseID)
			}
		})
	}

	plain := t.TempDir()
	for d := filepath.Dir(plain); d != filepath.Dir(d); d = filepath.Dir(d) {
		for _, v := range vcsDirs {
			if _, err := os.Stat(filepath.Join(d, v.name)); err == nil {
				t.Skipf("the temporary directory is in a repository (%s)", d) // the cases above have run
			}
		}
	}
	if root := sarifRootOf(plain); root.dir != plain {
		t.Errorf("sarifRootOf(%s), no repository above it = %s, want the module itself", plain, root.dir)
	}
}
