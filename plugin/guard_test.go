package plugin

import (
	"fmt"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestGuard runs the plugin's analyzer as golangci-lint does, on packages
// whose imports come from export data, over testdata/golangci and
// testdata/example, and checks that it reports what the rules report when
// every package is loaded from source for their facts (the lease package
// reaches net/http through metrics, a finding that needs those facts),
// with related positions in the text and the findings on one line joined
// (see byLine), and that a package that is no lease package is not loaded
// a second time.
func TestGuard(t *testing.T) {
	load := func(dir string, mode packages.LoadMode) []*packages.Package {
		pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: dir, Tests: true}, "./...")
		if err != nil {
			t.Fatal(err)
		}
		if packages.PrintErrors(pkgs) > 0 {
			t.Fatalf("%s does not load", dir)
		}
		return pkgs
	}
	for _, tc := range []struct {
		name, dir string
		settings  any
		must      string // one of the findings
		lease     string // the package loaded again
	}{
		{"default", "golangci", nil,
			"lease/lease.go:7:2: imports: lease package imports HTTP client net/http and uses http.DefaultClient: a network call in the write path can veto leadership (uses http.DefaultClient: lease.go:13:11)",
			"example.com/gcl/lease"},
		{"strict", "golangci", map[string]any{"imports": map[string]any{"strict": true}},
			"lease/lease.go:9:2: imports: lease package imports HTTP client net/http via example.com/gcl/metrics",
			"example.com/gcl/lease"},
		{"findings on one line", "example", nil,
			"lease/renew.go:12:3: fence: renewal does not test expires_at > clock_timestamp(): it revives a lease that has expired (in this SQL: renew.go:12:11)",
			"example.com/shop/lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(testdir.Root(), tc.dir)
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
			got := findings(t, dir, []*analysis.Analyzer{g.analyzer}, load(dir, packages.LoadSyntax), false)
			want := findings(t, dir, l.rules, load(dir, packages.LoadAllSyntax), true)
			if !slices.Equal(got, want) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tc.must) }) {
				t.Errorf("findings:\n%s\nwant (the rules' own, with %q among them):\n%s", strings.Join(got, "\n"), tc.must, strings.Join(want, "\n"))
			}
			var loaded []string
			for k := range g.runs {
				loaded = append(loaded, k.path)
			}
			if !slices.Equal(loaded, []string{tc.lease}) {
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
// file:line:col: message, sorted, once each (a package and its test
// variant report the same). For the rules (rules set), the rule's name
// goes before the message and its related positions after it, as
// "(message: file:line:col; ...)", relative to the finding's directory;
// for the plugin, a diagnostic on a line of several findings is split
// into them at "; line:col: ".
func findings(t *testing.T, dir string, analyzers []*analysis.Analyzer, pkgs []*packages.Package, rules bool) []string {
	t.Helper()
	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	joined := regexp.MustCompile(`; (\d+):(\d+): `)
	var out []string
	for _, act := range graph.Roots {
		if act.Err != nil {
			t.Fatalf("%s: %v", act, act.Err)
		}
		fset := act.Package.Fset
		for _, d := range act.Diagnostics {
			p := position(t, fset, dir, d.Pos)
			if !rules {
				if len(d.Related) > 0 {
					t.Errorf("%s: related information, which golangci-lint makes issues of their own: %v", p, d.Related)
				}
				msgs := joined.Split(d.Message, -1)
				at := joined.FindAllStringSubmatch(d.Message, -1)
				out = append(out, p+": "+msgs[0])
				for i, m := range at {
					out = append(out, fmt.Sprintf("%s:%s:%s: %s", strings.Split(p, ":")[0], m[1], m[2], msgs[i+1]))
				}
				continue
			}
			msg := act.Analyzer.Name + ": " + d.Message
			if len(d.Related) > 0 {
				var rel []string
				for _, r := range d.Related {
					rp := fset.Position(r.Pos)
					name, err := filepath.Rel(filepath.Dir(fset.Position(d.Pos).Filename), rp.Filename)
					if err != nil {
						t.Fatal(err)
					}
					rel = append(rel, fmt.Sprintf("%s: %s:%d:%d", r.Message, filepath.ToSlash(name), rp.Line, rp.Column))
				}
				msg += " (" + strings.Join(rel, "; ") + ")"
			}
			out = append(out, p+": "+msg)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func position(t *testing.T, fset *token.FileSet, dir string, pos token.Pos) string {
	t.Helper()
	p := fset.Position(pos)
	rel, err := filepath.Rel(dir, p.Filename)
	if err != nil {
		t.Fatal(err)
	}
	p.Filename = filepath.ToSlash(rel)
	return p.String()
}
