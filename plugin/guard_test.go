package plugin

import (
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestGuard runs the plugin's analyzer as golangci-lint does, on packages
// whose imports come from export data, over testdata/golangci, and checks
// that it reports what the rules report when every package is loaded from
// source for their facts (the lease package reaches net/http through
// metrics, a finding that needs those facts), and that the package that is
// no lease package is not loaded a second time.
func TestGuard(t *testing.T) {
	dir := filepath.Join(testdir.Root(), "golangci")
	load := func(mode packages.LoadMode) []*packages.Package {
		pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: dir, Tests: true}, "./...")
		if err != nil {
			t.Fatal(err)
		}
		if packages.PrintErrors(pkgs) > 0 {
			t.Fatal("testdata/golangci does not load")
		}
		return pkgs
	}
	linted, whole := load(packages.LoadSyntax), load(packages.LoadAllSyntax)
	for _, tc := range []struct {
		name     string
		settings any
		must     string // one of the findings
	}{
		{"default", nil, "lease/lease.go:7:2: imports: lease package imports HTTP client net/http and uses http.DefaultClient"},
		{"strict", map[string]any{"imports": map[string]any{"strict": true}}, "lease/lease.go:9:2: imports: lease package imports HTTP client net/http via example.com/gcl/metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			as, err := p.BuildAnalyzers()
			if err != nil || len(as) != 1 {
				t.Fatalf("BuildAnalyzers: %d analyzers, %v; want one", len(as), err)
			}
			l := p.(*linter)
			g := newGuard(l.cfg, l.rules)
			got := findings(t, dir, []*analysis.Analyzer{g.analyzer}, linted, false)
			want := findings(t, dir, l.rules, whole, true)
			if !slices.Equal(got, want) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tc.must) }) {
				t.Errorf("findings:\n%s\nwant (the rules' own, with %q among them):\n%s", strings.Join(got, "\n"), tc.must, strings.Join(want, "\n"))
			}
			var loaded []string
			for k := range g.runs {
				loaded = append(loaded, k.path)
			}
			if !slices.Equal(loaded, []string{"example.com/gcl/lease"}) {
				t.Errorf("loaded again: %q, want only the lease package", loaded)
			}
		})
	}
}

// TestTestsSetting checks that imports.tests decodes and reaches the imports
// rule's -imports.tests flag, which go vet and the standalone driver set.
func TestTestsSetting(t *testing.T) {
	p, err := New(map[string]any{"imports": map[string]any{"tests": true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.(*linter).rules {
		if a.Name == "imports" {
			if f := a.Flags.Lookup("tests"); f == nil || f.Value.String() != "true" {
				t.Fatalf("imports.tests: true did not reach the imports rule's tests flag: %v", f)
			}
			return
		}
	}
	t.Fatal("no imports analyzer")
}

// findings runs analyzers on pkgs and returns their findings as
// file:line:col: message, the rule's name before the message when prefix
// is set, sorted, once each (a package and its test variant report the
// same).
func findings(t *testing.T, dir string, analyzers []*analysis.Analyzer, pkgs []*packages.Package, prefix bool) []string {
	t.Helper()
	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, act := range graph.Roots {
		if act.Err != nil {
			t.Fatalf("%s: %v", act, act.Err)
		}
		for _, d := range act.Diagnostics {
			msg := d.Message
			if prefix {
				msg = act.Analyzer.Name + ": " + msg
			}
			out = append(out, position(t, act.Package.Fset, dir, d)+": "+msg)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func position(t *testing.T, fset *token.FileSet, dir string, d analysis.Diagnostic) string {
	t.Helper()
	p := fset.Position(d.Pos)
	rel, err := filepath.Rel(dir, p.Filename)
	if err != nil {
		t.Fatal(err)
	}
	p.Filename = filepath.ToSlash(rel)
	return p.String()
}
