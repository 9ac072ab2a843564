package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestEveryPackage marks every package a lease package with the ...
// pattern, which also matches go test's synthesized main packages (p.test,
// whose file lies in the build cache): each finding is reported once, in
// the module's own files.
func TestEveryPackage(t *testing.T) {
	dir := example(t)
	r := run(t, dir, binary, "-lease.packages=...", "./...")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	var text []string
	for line := range strings.Lines(r.stderr) {
		if !strings.HasPrefix(line, dir+string(filepath.Separator)) {
			t.Errorf("finding outside the module's files: %s", line)
		}
		text = append(text, strings.TrimSpace(strings.TrimPrefix(line, dir+string(filepath.Separator))))
	}

	r = run(t, dir, binary, "-format=sarif", "-lease.packages=...", "./...")
	if r.code != 0 {
		t.Fatalf("-format sarif: exit %d, want 0\n%s", r.code, r.stderr)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message   struct{ Text string }
				Locations []sarifLocation
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil {
		t.Fatal(err)
	}
	file := sarifFiles(t, r.stdout)
	seen := make(map[string]bool)
	for _, res := range log.Runs[0].Results {
		loc := res.Locations[0]
		uri := loc.PhysicalLocation.ArtifactLocation.URI
		f := file(uri)
		if _, err := os.Stat(f); err != nil || !strings.HasPrefix(f, dir+string(filepath.Separator)) {
			t.Errorf("result at %s (%s), not a file of the module (%v): %s", uri, f, err, res.Message.Text)
		}
		rel, _ := filepath.Rel(dir, f)
		k := fmt.Sprintf("%s:%d:%d: %s", filepath.ToSlash(rel), loc.PhysicalLocation.Region.StartLine, loc.PhysicalLocation.Region.StartColumn, res.Message.Text)
		if seen[k] {
			t.Errorf("result twice: %s", k)
		}
		seen[k] = true
	}
	// The same findings as the text output, whose related lines (a tab
	// after the position) are not results.
	var want []string
	for _, l := range text {
		if m := diagLine.FindStringIndex(l); m != nil && !strings.HasPrefix(l[m[1]:], "\t") {
			pos, msg, _ := strings.Cut(l, ": ")
			want = append(want, pos+": "+msg)
		}
	}
	if len(seen) != len(want) || len(want) < len(wantExample) {
		t.Errorf("%d SARIF results, %d text findings (want at least %d):\n%s", len(seen), len(want), len(wantExample), strings.Join(want, "\n"))
	}
}

// TestOnlyLeasePackagesLoaded runs the standalone command on
// testdata/fastpath, where one package is a lease package by directive
// (it reaches an HTTP client three imports away), two have a near miss of
// the directive (one with the name leaseguard spelt wrong), and one that
// is neither does not compile. Run directly,
// leaseguard lists the packages first and analyses only those that can
// have a finding, with their imports: the lease package is checked with
// its dependencies' facts, the near miss is reported, and the package
// that does not compile is never loaded, unless a setting makes it a
// lease package.
func TestOnlyLeasePackagesLoaded(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "fastpath"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lease/lease.go:6:8: lease package imports HTTP client net/http via example.com/fast/relay -> example.com/fast/hop -> example.com/fast/client (example.com/fast/client uses http.Client.Get): a network call in the write path can veto leadership",
		`mention/mention.go:1:1: malformed directive "// leaseguard:lease": write //leaseguard:lease, or the package is not checked`,
		`misspelt/misspelt.go:1:1: malformed directive "//lease-guard:lease": write //leaseguard:lease, or the package is not checked`,
	}
	t.Run("directive", func(t *testing.T) {
		r := run(t, dir, binary, "./...")
		if got := findings(r.stderr, dir); r.code != 3 || !slices.Equal(got, want) {
			t.Errorf("exit %d, want 3; findings:\n%s\nwant:\n%s\nstderr:\n%s", r.code, strings.Join(got, "\n"), strings.Join(want, "\n"), r.stderr)
		}
	})
	t.Run("sarif", func(t *testing.T) {
		r := run(t, dir, binary, "-format=sarif", "./...")
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, "not an int") || strings.Count(r.stdout, `"ruleId"`) != len(want) {
			t.Errorf("exit %d, want 0 and %d results, none from other/:\n%s\n%s", r.code, len(want), r.stdout, r.stderr)
		}
	})
	t.Run("setting", func(t *testing.T) {
		r := run(t, dir, binary, "-lease.packages=example.com/fast/other", "./...")
		if r.code != 1 || !strings.Contains(r.stderr, `cannot use "not an int"`) {
			t.Errorf("exit %d, want 1 and the compile error of the package the setting names:\n%s", r.code, r.stderr)
		}
	})
	t.Run("misspelt directive alone", func(t *testing.T) {
		for _, cmd := range [][]string{{binary, "./misspelt"}, {"go", "vet", "-vettool=" + binary, "./misspelt"}} {
			r := run(t, dir, cmd[0], cmd[1:]...)
			if got := findings(r.stderr, dir); r.code == 0 || !slices.Equal(got, want[2:]) {
				t.Errorf("%v: exit %d, want non-zero; findings:\n%s\nwant:\n%s", cmd, r.code, strings.Join(got, "\n"), want[2])
			}
		}
	})
	t.Run("no lease package", func(t *testing.T) {
		r := run(t, dir, binary, "-json", "./plain", "./other")
		if r.code != 0 || r.stdout != "{}\n" || r.stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0, {} and nothing", r.code, r.stdout, r.stderr)
		}
	})
}

// TestLeasePackagesAim gives -lease.packages patterns that name no package
// the command line names: one that names no package anywhere is an error
// that names it (exit 2, one line), however the findings are written; one
// that names a package outside the patterns (here outside ./plain, or an
// import of ./lease) has that package analysed as a lease package.
func TestLeasePackagesAim(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "fastpath"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"example.com/fast/plian", "example.com/nope/...", "example.com/fast/lease_tset"} {
		for _, output := range [][]string{nil, {"-json"}, {"-format=sarif"}, {"-test=false"}} {
			args := append(slices.Clone(output), "-lease.packages=example.com/fast/plain,"+pattern, "./plain")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := run(t, dir, binary, args...)
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], `-lease.packages: "`+pattern+`" matches no package`) {
					t.Errorf("exit %d, want 2 and one line naming %q; stderr:\n%s", r.code, pattern, r.stderr)
				}
			})
		}
	}
	relay := "relay/relay.go:4:8: lease package imports HTTP client net/http via example.com/fast/hop -> example.com/fast/client (example.com/fast/client uses http.Client.Get): a network call in the write path can veto leadership"
	lease := "lease/lease.go:6:8: lease package imports HTTP client net/http via example.com/fast/relay -> example.com/fast/hop -> example.com/fast/client (example.com/fast/client uses http.Client.Get): a network call in the write path can veto leadership"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-lease.packages=example.com/fast/relay", "./plain"}, []string{relay}},
		{[]string{"-lease.packages=example.com/fast/rel...", "./plain"}, []string{relay}},
		{[]string{"-test=false", "-lease.packages=example.com/fast/relay", "./plain"}, []string{relay}},
		{[]string{"-lease.packages=example.com/fast/relay", "./lease"}, []string{lease, relay}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, dir, binary, tc.args...)
			if got := findings(r.stderr, dir); r.code != 3 || !slices.Equal(got, tc.want) {
				t.Errorf("exit %d, want 3; findings:\n%s\nwant:\n%s\nstderr:\n%s", r.code, strings.Join(got, "\n"), strings.Join(tc.want, "\n"), r.stderr)
			}
		})
	}
	t.Run("a package whose files the build excludes", func(t *testing.T) {
		// It exists: its analysis says what is wrong with it, and the
		// setting is not called a pattern that matches nothing.
		mod := t.TempDir()
		for name, src := range map[string]string{
			"go.mod":         "module example.com/tagged\n\ngo 1.24\n",
			"plain/plain.go": "package plain\n",
			"never/never.go": "//go:build never\n\npackage never\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mod, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := run(t, mod, binary, "-lease.packages=example.com/tagged/never", "./plain")
		if r.code != 1 || !strings.Contains(r.stderr, "build constraints exclude all Go files") {
			t.Errorf("exit %d, want 1 and the package's error:\n%s", r.code, r.stderr)
		}
	})
	t.Run("sarif", func(t *testing.T) {
		r := run(t, dir, binary, "-format=sarif", "-lease.packages=example.com/fast/relay", "./plain")
		if r.code != 0 || !strings.Contains(r.stdout, `relay/relay.go"`) { // from the repository's root
			t.Errorf("exit %d, want 0 and a result in relay/relay.go:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
}
