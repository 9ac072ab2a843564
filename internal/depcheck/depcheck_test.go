package depcheck_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/depcheck"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// envFact marks a function that reaches os.Getenv.
type envFact struct{ Via string }

func (*envFact) AFact()           {}
func (f *envFact) String() string { return "reaches os.Getenv via " + f.Via }

// countFact counts the functions that reach os.Getenv in a package and,
// through their facts, its imports.
type countFact struct{ N int }

func (*countFact) AFact()           {}
func (f *countFact) String() string { return fmt.Sprint(f.N) }

// decls is required by env: a result passed within a package.
var decls = &analysis.Analyzer{
	Name:       "decls",
	Doc:        "lists the package's function declarations",
	ResultType: reflect.TypeFor[[]*ast.FuncDecl](),
	Run: func(pass *analysis.Pass) (any, error) {
		var fns []*ast.FuncDecl
		for _, f := range pass.Files {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
					fns = append(fns, fn)
				}
			}
		}
		return fns, nil
	},
}

// env marks the functions that reach os.Getenv, through other packages'
// functions by their facts, and reports each call to one and each
// package's count.
var env = &analysis.Analyzer{
	Name:      "env",
	Doc:       "reports calls that reach os.Getenv",
	Requires:  []*analysis.Analyzer{decls},
	FactTypes: []analysis.Fact{new(envFact), new(countFact)},
	Run: func(pass *analysis.Pass) (any, error) {
		reaches := func(call *ast.CallExpr) (string, bool) {
			fn := typeutil.StaticCallee(pass.TypesInfo, call)
			if fn == nil || fn.Pkg() == nil {
				return "", false
			}
			if fn.Pkg().Path() == "os" && fn.Name() == "Getenv" {
				return "os.Getenv", true
			}
			var f envFact
			if pass.ImportObjectFact(fn, &f) {
				return fn.FullName() + " <- " + f.Via, true
			}
			return "", false
		}
		fns := pass.ResultOf[decls].([]*ast.FuncDecl)
		n := 0
		for changed := true; changed; {
			changed = false
			for _, fn := range fns {
				obj := pass.TypesInfo.Defs[fn.Name]
				if pass.ImportObjectFact(obj, new(envFact)) {
					continue
				}
				ast.Inspect(fn.Body, func(node ast.Node) bool {
					if call, ok := node.(*ast.CallExpr); ok && !changed {
						if via, ok := reaches(call); ok {
							pass.ExportObjectFact(obj, &envFact{Via: via})
							n++
							changed = true
						}
					}
					return !changed
				})
			}
		}
		for _, imp := range pass.Pkg.Imports() {
			var c countFact
			if pass.ImportPackageFact(imp, &c) {
				n += c.N
			}
		}
		pass.ExportPackageFact(&countFact{N: n})
		for _, f := range pass.Files {
			ast.Inspect(f, func(node ast.Node) bool {
				if call, ok := node.(*ast.CallExpr); ok {
					if via, ok := reaches(call); ok {
						pass.Reportf(call.Pos(), "call reaches %s", via)
					}
				}
				return true
			})
		}
		if len(pass.Files) > 0 { // not unsafe
			pass.Reportf(pass.Files[0].Package, "%s: %d functions reach os.Getenv", pass.Pkg.Path(), n)
		}
		return nil, nil
	},
}

// TestLikeChecker checks that depcheck reports what checker.Analyze
// reports with every package loaded from source: a probe analyzer whose
// facts cross export data two imports deep, a method's fact, and a test
// variant (q, compiled again for p's external test, passes p's type to
// it); and leaseguard's rules on the example.
func TestLikeChecker(t *testing.T) {
	var cfg config.Config
	cfg.Lease.Packages = config.Patterns{"example.com/shop/lease"}
	for _, tc := range []struct {
		dir, path string
		analyzers []*analysis.Analyzer
		must      []string
	}{
		{"depcheck", "example.com/dc/p", []*analysis.Analyzer{env}, []string{
			"example.com/dc/p p/p.go:17:26: env: call reaches example.com/dc/r.X <- example.com/dc/s.Env <- os.Getenv",
			"example.com/dc/p p/p.go:20:26: env: call reaches (example.com/dc/r.T).M <- example.com/dc/r.X <- example.com/dc/s.Env <- os.Getenv",
			"example.com/dc/p_test [example.com/dc/p.test] p/x_test.go:13:38: env: call reaches example.com/dc/q.F <- example.com/dc/p.G <- os.Getenv",
			"example.com/dc/p_test [example.com/dc/p.test] p/x_test.go:13:61: env: call reaches example.com/dc/p.FromTest <- example.com/dc/p.G <- os.Getenv",
		}},
		{"depcheck", "example.com/dc/r", []*analysis.Analyzer{env}, []string{
			"example.com/dc/r_test [example.com/dc/r.test] r/r_test.go:13:32: env: call reaches example.com/dc/r.X <- example.com/dc/s.Env <- os.Getenv",
		}},
		{"example", "example.com/shop/lease", analyzer.New(&cfg), []string{
			"example.com/shop/lease lease/lease.go:",
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			dir := filepath.Join(testdir.Root(), tc.dir)
			got := findings(t, dir, tc.path, func() ([]*depcheck.Root, error) {
				return depcheck.Run(dir, tc.path, nil, tc.analyzers)
			})
			want := findings(t, dir, tc.path, func() ([]*depcheck.Root, error) {
				return depcheck.Reference(&depcheck.Config{Dir: dir, Tests: true}, []string{tc.path}, tc.analyzers)
			})
			if !slices.Equal(got, want) {
				t.Errorf("depcheck:\n%s\nchecker.Analyze:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, m := range tc.must {
				if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, m) }) {
					t.Errorf("no finding %q among:\n%s", m, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// views reports, in each package that imports example.com/dc/p, whether
// the p it sees is p's test variant, which declares FromTest.
var views = &analysis.Analyzer{
	Name: "views",
	Doc:  "reports which p a package sees",
	Run: func(pass *analysis.Pass) (any, error) {
		for _, imp := range pass.Pkg.Imports() {
			if imp.Path() == "example.com/dc/p" {
				pass.Reportf(pass.Files[0].Package, "sees p with FromTest: %t", imp.Scope().Lookup("FromTest") != nil)
			}
		}
		return nil, nil
	},
}

// TestSeveralRoots checks that Analyze serves several roots in one graph,
// with test variants or without, and with build tags, as checker.Analyze
// does given the same packages: the same findings, the roots in the same
// order, and each package analysed once. p and v share their imports; v imports p and q
// from export data while p's external test imports p and q compiled
// again for p's test (one package at a time, v's turn comes after q's
// test variant is done); and r is both a root and an import of p.
func TestSeveralRoots(t *testing.T) {
	dir := filepath.Join(testdir.Root(), "depcheck")
	for _, tc := range []struct {
		name    string
		paths   []string
		tests   bool
		workers int
		roots   []string // IDs, in order
		must    []string
		flags   []string // build flags
	}{
		{"tests", []string{"example.com/dc/p", "example.com/dc/v"}, true, 0, []string{
			"example.com/dc/p", "example.com/dc/v", "example.com/dc/p [example.com/dc/p.test]", "example.com/dc/p_test [example.com/dc/p.test]",
		}, []string{
			"example.com/dc/v v/v.go:12:32: env: call reaches example.com/dc/q.F <- example.com/dc/p.G <- os.Getenv",
			"example.com/dc/v v/v.go:4:1: views: sees p with FromTest: false",
			"example.com/dc/p_test [example.com/dc/p.test] p/x_test.go:13:38: env: call reaches example.com/dc/q.F <- example.com/dc/p.G <- os.Getenv",
			"example.com/dc/p_test [example.com/dc/p.test] p/x_test.go:1:1: views: sees p with FromTest: true",
		}, nil},
		{"tests, one package at a time", []string{"example.com/dc/p", "example.com/dc/v"}, true, 1, []string{
			"example.com/dc/p", "example.com/dc/v", "example.com/dc/p [example.com/dc/p.test]", "example.com/dc/p_test [example.com/dc/p.test]",
		}, []string{
			"example.com/dc/v v/v.go:4:1: views: sees p with FromTest: false",
			"example.com/dc/p_test [example.com/dc/p.test] p/x_test.go:1:1: views: sees p with FromTest: true",
		}, nil},
		{"no tests", []string{"example.com/dc/p", "example.com/dc/r"}, false, 0, []string{
			"example.com/dc/r", "example.com/dc/p",
		}, []string{
			"example.com/dc/r r/r.go:7:26: env: call reaches example.com/dc/s.Env <- os.Getenv",
			"example.com/dc/p p/p.go:17:26: env: call reaches example.com/dc/r.X <- example.com/dc/s.Env <- os.Getenv",
		}, nil},
		{"build tags", []string{"example.com/dc/p", "example.com/dc/r"}, false, 0, []string{
			"example.com/dc/r", "example.com/dc/p",
		}, []string{
			"example.com/dc/r r/tagged.go:8:31: env: call reaches example.com/dc/s.Env <- os.Getenv",
		}, []string{"-tags=dctagged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			analyzers := []*analysis.Analyzer{env, views}
			cfg := &depcheck.Config{Dir: dir, Tests: tc.tests, Workers: tc.workers, BuildFlags: tc.flags}
			analysed := make(map[string]int)
			cfg.Done = func(id string, _ time.Duration) { analysed[id]++ }
			var ids, refIDs []string
			got := findings(t, dir, strings.Join(tc.paths, " "), func() ([]*depcheck.Root, error) {
				roots, err := depcheck.Analyze(cfg, tc.paths, analyzers)
				for _, r := range roots {
					ids = append(ids, r.ID)
				}
				return roots, err
			})
			want := findings(t, dir, strings.Join(tc.paths, " "), func() ([]*depcheck.Root, error) {
				roots, err := depcheck.Reference(cfg, tc.paths, analyzers)
				for _, r := range roots {
					refIDs = append(refIDs, r.ID)
				}
				return roots, err
			})
			if !slices.Equal(got, want) {
				t.Errorf("depcheck:\n%s\nchecker.Analyze:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Equal(ids, tc.roots) || !slices.Equal(refIDs, tc.roots) {
				t.Errorf("roots %q, checker.Analyze's %q; want %q", ids, refIDs, tc.roots)
			}
			for _, m := range tc.must {
				if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, m+" (") }) {
					t.Errorf("no finding %q among:\n%s", m, strings.Join(got, "\n"))
				}
			}
			for id, n := range analysed {
				if n != 1 {
					t.Errorf("%s analysed %d times", id, n)
				}
				if !tc.tests && strings.Contains(id, ".test]") {
					t.Errorf("%s analysed without tests", id)
				}
			}
			for _, shared := range []string{"example.com/dc/s", "os"} {
				if analysed[shared] != 1 {
					t.Errorf("%s, which both roots import, analysed %d times, want once", shared, analysed[shared])
				}
			}
		})
	}
}

// findings returns what run reports on path and its test variants, a
// line each (see finding), sorted.
func findings(t *testing.T, dir, path string, run func() ([]*depcheck.Root, error)) []string {
	t.Helper()
	roots, err := run()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, r := range roots {
		for _, d := range r.Diagnostics {
			out = append(out, finding(t, dir, r.ID, r.Fset, d.Analyzer, d.Diagnostic))
		}
	}
	slices.Sort(out)
	return out
}

// finding formats d with its package, analyzer, positions relative to dir,
// URL and related information.
func finding(t *testing.T, dir, id string, fset *token.FileSet, a *analysis.Analyzer, d analysis.Diagnostic) string {
	t.Helper()
	pos := func(p token.Pos) string {
		if !p.IsValid() {
			return "-"
		}
		posn := fset.Position(p)
		if rel, err := filepath.Rel(dir, posn.Filename); err == nil {
			posn.Filename = filepath.ToSlash(rel)
		}
		return posn.String()
	}
	s := fmt.Sprintf("%s %s: %s: %s (to %s, %s)", id, pos(d.Pos), a.Name, d.Message, pos(d.End), d.URL)
	for _, r := range d.Related {
		s += fmt.Sprintf("\n\t%s-%s: %s", pos(r.Pos), pos(r.End), r.Message)
	}
	return s
}

// TestErrors checks that a failure says what failed, on which package,
// and that a panic in an analyzer is an error, not a crash.
func TestErrors(t *testing.T) {
	dir := filepath.Join(testdir.Root(), "depcheck")
	panics := &analysis.Analyzer{
		Name:      "panics",
		Doc:       "panics on r",
		FactTypes: []analysis.Fact{new(countFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			if pass.Pkg.Path() == "example.com/dc/r" {
				panic("r")
			}
			return nil, nil
		},
	}
	for _, tc := range []struct {
		path      string
		analyzers []*analysis.Analyzer
		want      string
	}{
		{"example.com/dc/bad", []*analysis.Analyzer{env}, `example.com/dc/bad/broken: bad/broken/broken.go:5:23: cannot use "n"`}, // go list -export compiles it
		{"example.com/dc/bad/broken", []*analysis.Analyzer{env}, "type-checking example.com/dc/bad/broken: " + filepath.Join(testdir.Root(), "depcheck", "bad/broken/broken.go") + `:5:23: cannot use "n"`},
		{"example.com/dc/nope", []*analysis.Analyzer{env}, "example.com/dc/nope"},
		{"example.com/dc/p", []*analysis.Analyzer{panics}, "panics on example.com/dc/r: panic: r"},
	} {
		_, err := depcheck.Run(dir, tc.path, nil, tc.analyzers)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%s): %v, want an error with %q", tc.path, err, tc.want)
		}
	}
}

// TestAllFacts checks Pass.AllObjectFacts and AllPackageFacts: the
// analyzer's facts on the package's own objects and on its imports'.
func TestAllFacts(t *testing.T) {
	var objects, packages []string
	all := &analysis.Analyzer{
		Name:      "all",
		Doc:       "marks every exported function and lists the facts it can see",
		FactTypes: []analysis.Fact{new(envFact), new(countFact)},
		Run: func(pass *analysis.Pass) (any, error) {
			for _, name := range pass.Pkg.Scope().Names() {
				if fn, ok := pass.Pkg.Scope().Lookup(name).(*types.Func); ok && fn.Exported() {
					pass.ExportObjectFact(fn, &envFact{})
				}
			}
			pass.ExportPackageFact(&countFact{})
			if pass.Pkg.Path() == "example.com/dc/p" && !strings.HasSuffix(pass.Files[0].Name.Name, "_test") {
				for _, f := range pass.AllObjectFacts() {
					objects = append(objects, f.Object.Pkg().Path()+"."+f.Object.Name())
				}
				for _, f := range pass.AllPackageFacts() {
					packages = append(packages, f.Package.Path())
				}
			}
			return nil, nil
		},
	}
	if _, err := depcheck.Run(filepath.Join(testdir.Root(), "depcheck"), "example.com/dc/q", nil, []*analysis.Analyzer{all}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(objects)
	slices.Sort(packages)
	for _, want := range []string{"example.com/dc/p.G", "example.com/dc/p.Use", "example.com/dc/r.X", "example.com/dc/r.Y"} {
		if !slices.Contains(objects, want) {
			t.Errorf("AllObjectFacts: %q, want %s among them", objects, want)
		}
	}
	if !slices.Contains(packages, "example.com/dc/p") || !slices.Contains(packages, "example.com/dc/r") {
		t.Errorf("AllPackageFacts: %q, want p and r among them", packages)
	}
}

// TestImportsOnlyForFacts checks that an analyzer without facts runs on
// the package and its test variants only, and one with facts, with what
// it requires, on every import too.
func TestImportsOnlyForFacts(t *testing.T) {
	var mu sync.Mutex
	ran := make(map[string][]string) // analyzer -> packages
	counting := func(name string, facts []analysis.Fact, requires ...*analysis.Analyzer) *analysis.Analyzer {
		return &analysis.Analyzer{
			Name: name, Doc: "records where it runs", FactTypes: facts, Requires: requires,
			Run: func(pass *analysis.Pass) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				ran[name] = append(ran[name], pass.Pkg.Path())
				return nil, nil
			},
		}
	}
	required := counting("required", nil)
	withFacts := counting("facts", []analysis.Fact{new(countFact)}, required)
	without := counting("nofacts", nil)
	if _, err := depcheck.Run(filepath.Join(testdir.Root(), "depcheck"), "example.com/dc/p", nil, []*analysis.Analyzer{withFacts, without}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ran["nofacts"])
	if want := []string{"example.com/dc/p", "example.com/dc/p", "example.com/dc/p_test"}; !slices.Equal(ran["nofacts"], want) {
		t.Errorf("an analyzer without facts ran on %q, want the package and its test variants: %q", ran["nofacts"], want)
	}
	for _, name := range []string{"facts", "required"} {
		for _, want := range []string{"example.com/dc/s", "example.com/dc/q", "os"} {
			if !slices.Contains(ran[name], want) {
				t.Errorf("%s did not run on %s (it ran on %d packages)", name, want, len(ran[name]))
			}
		}
	}
}
