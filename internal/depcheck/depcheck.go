// Package depcheck runs analyzers on packages (the roots), their test
// variants and every package they import, in one process, the way go vet
// runs them in a process per package: in dependency order, each package
// parsed and type-checked from source against its imports' export data,
// with only the analyzers that have facts (and what they require) on the
// imports, and every analyzer on the roots and their variants. Once a
// package is done, only its facts are kept; its syntax, type-checker
// records and results are dropped. What stays is the imports' types, read
// from export data once for all the packages that import them, and the
// facts: a fraction of the memory that go/packages' LoadAllSyntax with
// checker.Analyze holds, the whole graph from source until the analysis
// ends (docs/performance.md has the figures; bench/graph.sh measures
// them).
//
// The go command lists the graph and builds the imports' export data (its
// build cache keeps them), with the environment's GOFLAGS and the
// Config's build flags. The test variants, and the imports compiled again
// for the tests, are type-checked from source only; so is a root, unless
// another package imports it (another root, or its external test through
// another package), which needs its export data.
package depcheck

import (
	"fmt"
	"go/build"
	"go/token"
	"go/types"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/analysis"
)

// A Root is a root package, or one of its test variants, and what the
// analyzers reported on it.
type Root struct {
	ID          string   // as go list names it: "p", "p [p.test]", "p_test [p.test]"
	Files       []string // its compiled Go files, absolute
	Fset        *token.FileSet
	Diagnostics []Diagnostic // in the order the analyzers reported them, each analyzer's after those it requires
}

// A Diagnostic is what an analyzer reported, its URL resolved against the
// analyzer's as checker.Analyze resolves it.
type Diagnostic struct {
	Analyzer *analysis.Analyzer
	analysis.Diagnostic
}

// A Config says where and how Analyze analyses.
type Config struct {
	// Dir is the directory the go command runs in; "" is the current
	// one.
	Dir string
	// Tests analyses the roots' test variants too, and the imports
	// compiled again for them. False: the roots and their imports only.
	Tests bool
	// BuildFlags are the go command's build flags for its listings
	// (-tags=…), besides the environment's GOFLAGS.
	BuildFlags []string
	// Sizes are the target's type sizes; nil: the gc compiler's for
	// GOARCH.
	Sizes types.Sizes
	// Workers is how many packages are analysed at once; 0 or less:
	// GOMAXPROCS.
	Workers int
	// Done, if not nil, is called after each package's analysis with
	// its ID and how long the analysis took (parsing and type-checking
	// included), one call at a time.
	Done func(id string, took time.Duration)
}

// Run analyses the package at path, as seen from dir, with its test
// variants and their imports. sizes are the target's type sizes (nil: the
// gc compiler's for GOARCH). The error says what failed (listing,
// type-checking, or an analyzer) and on which package.
func Run(dir, path string, sizes types.Sizes, analyzers []*analysis.Analyzer) ([]*Root, error) {
	return Analyze(&Config{Dir: dir, Tests: true, Sizes: sizes}, []string{path}, analyzers)
}

// Analyze analyses the packages at paths, import paths as go list prints
// them, in one graph with their imports (and their test variants with
// cfg.Tests): a package that several of them import is analysed once.
// The roots come in the order of the go command's listing, each after
// the packages it imports: the order in which the text output of
// checker.Analyze's graph, for the packages that go/packages loads for
// paths, visits them for each analyzer. The
// error says what failed (listing, type-checking, or an analyzer) and on
// which package.
func Analyze(cfg *Config, paths []string, analyzers []*analysis.Analyzer) ([]*Root, error) {
	if err := analysis.Validate(analyzers); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, nil
	}
	sizes := cfg.Sizes
	if sizes == nil {
		sizes = types.SizesFor("gc", build.Default.GOARCH)
	}
	args := append(slices.Clone(cfg.BuildFlags), "-deps", "-compiled")
	if cfg.Tests {
		args = append(args, "-test")
	}
	pkgs, err := list(cfg.Dir, append(append(args, "--"), paths...)...)
	if err != nil {
		return nil, err
	}
	g, err := newGraph(pkgs, paths, sizes, analyzers)
	if err != nil {
		return nil, err
	}
	if err := g.export(cfg.Dir, cfg.BuildFlags); err != nil {
		return nil, err
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if err := g.run(workers, cfg.Done); err != nil {
		return nil, err
	}
	var roots []*Root
	for _, n := range g.nodes {
		if n.root != nil {
			roots = append(roots, n.root)
		}
	}
	return roots, nil
}

// A graph is the packages to analyse, in dependency order.
type graph struct {
	nodes []*node
	byID  map[string]*node
	sizes types.Sizes
	all   []*analysis.Analyzer // every analyzer and its requirements, each after those it requires
	facts []*analysis.Analyzer // those that run on imports
	fset  *token.FileSet       // every package's, source and export data
	types universe
}

// A node is one package of the graph.
type node struct {
	*listed
	imports, importers []*node
	pending            int // imports not yet analysed; guarded by run's lock

	root    *Root            // for a root and its test variants: set at the start, filled by analyse
	keep    bool             // a test variant that another package imports: keep its types
	tpkg    *types.Package   // if keep, its types, once analysed
	visible map[string]*node // by path, for a package that can see test variants; nil: path is ID
	facts   *facts           // its facts, once analysed
}

// A universe is the types of the packages imported from export data, by
// path, which every type-check shares: each package's export data is read
// once. Only packages that are not test variants have export data, and
// their export data refers to none: a test variant is a package compiled
// again because it imports the package under test, and a package whose
// export data refers to it imports it too. A test variant, type-checked
// from source, is imported as such (its node keeps its types) by the test
// variants above it, which see the same types as it does for the packages
// that both import.
type universe struct {
	sync.Mutex
	pkgs map[string]*types.Package
}

// newGraph returns the graph of pkgs, which go list -deps printed for
// paths (with -test or not), to be analysed with analyzers.
func newGraph(pkgs []*listed, paths []string, sizes types.Sizes, analyzers []*analysis.Analyzer) (*graph, error) {
	g := &graph{byID: make(map[string]*node), sizes: sizes, fset: token.NewFileSet(), types: universe{pkgs: make(map[string]*types.Package)}}
	g.all, g.facts = order(analyzers)
	roots := make(map[string]bool, len(paths))
	for _, path := range paths {
		roots[path] = true
	}
	for _, p := range pkgs {
		if err := p.err(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.ImportPath, err)
		}
		if p.ImportPath == "unsafe" || p.isTestMain(roots) {
			continue // no source to check; go test's generated main
		}
		n := &node{listed: p}
		if p.isRoot(roots) {
			n.root = &Root{ID: p.ImportPath, Files: p.abs(p.CompiledGoFiles)}
		}
		g.nodes = append(g.nodes, n)
		g.byID[p.ImportPath] = n
	}
	for _, n := range g.nodes {
		for _, id := range n.Imports {
			if m := g.byID[id]; m != nil {
				n.imports = append(n.imports, m)
				m.importers = append(m.importers, n)
			}
		}
	}
	for _, n := range g.nodes {
		n.keep = n.ForTest != "" && len(n.importers) > 0
		if n.ForTest != "" {
			n.visible = make(map[string]*node)
			n.see(n.visible)
		}
	}
	return g, nil
}

// isTestMain reports whether p is the main package that go test generates
// for one of roots.
func (p *listed) isTestMain(roots map[string]bool) bool {
	tested, ok := strings.CutSuffix(p.ImportPath, ".test")
	return ok && p.ForTest == "" && p.Name == "main" && roots[tested]
}

// isRoot reports whether p is one of roots, or its test variant or
// external test package; not one of roots compiled again for another's
// test.
func (p *listed) isRoot(roots map[string]bool) bool {
	path := p.path()
	switch p.ForTest {
	case "", path:
		return roots[path]
	default:
		return roots[p.ForTest] && path == p.ForTest+"_test"
	}
}

// see adds the packages that n imports, directly or not, to visible.
func (n *node) see(visible map[string]*node) {
	for _, m := range n.imports {
		if _, ok := visible[m.path()]; !ok {
			visible[m.path()] = m
			m.see(visible)
		}
	}
}

// lookup returns the package of the graph that n sees at path, or nil.
func (g *graph) lookup(n *node, path string) *node {
	if n.visible != nil {
		return n.visible[path]
	}
	return g.byID[path]
}

// export asks the go command for the export data of every package that
// another imports, except the test variants, which are imported as
// type-checked from source. A root is imported only when another root
// imports it, or it has no test files of its own and its external test
// imports it, directly or through other packages, which import it from
// export data like any other.
func (g *graph) export(dir string, buildFlags []string) error {
	var ids []string
	for _, n := range g.nodes {
		if n.ForTest == "" && len(n.importers) > 0 {
			ids = append(ids, n.ImportPath)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	args := append(slices.Clone(buildFlags), "-export", "-json=ImportPath,Export,Error", "--")
	pkgs, err := list(dir, append(args, ids...)...)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		n := g.byID[p.ImportPath]
		if err := p.err(); err != nil {
			return fmt.Errorf("%s: %w", p.ImportPath, err)
		}
		if n == nil || p.Export == "" {
			return fmt.Errorf("go list -export: no export data for %s", p.ImportPath)
		}
		n.Export = p.Export
	}
	return nil
}

// run analyses the graph's packages with up to workers at once, each once
// its imports are done, and calls done, if not nil, after each. It
// returns the first error; packages that import a failed one are not
// analysed.
func (g *graph) run(workers int, done func(id string, took time.Duration)) error {
	ready := make(chan *node, len(g.nodes))
	var (
		mu     sync.Mutex
		queued int // in ready or being analysed
		first  error
	)
	for _, n := range g.nodes {
		n.pending = len(n.imports)
		if n.pending == 0 {
			ready <- n
			queued++
		}
	}
	if queued == 0 {
		close(ready)
	}
	var wg sync.WaitGroup
	for range min(workers, max(len(g.nodes), 1)) {
		wg.Go(func() {
			for n := range ready {
				mu.Lock()
				failed := first != nil
				mu.Unlock()
				var err error
				start := time.Now()
				if !failed {
					err = g.analyse(n)
				}
				took := time.Since(start)
				mu.Lock()
				queued--
				if done != nil && !failed && err == nil {
					done(n.ImportPath, took)
				}
				if err != nil && first == nil {
					first = err
				}
				if first == nil {
					for _, m := range n.importers {
						if m.pending--; m.pending == 0 {
							ready <- m
							queued++
						}
					}
				}
				if queued == 0 {
					close(ready)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// order returns analyzers with everything they require, each after what
// it requires, and of those the ones that run on imports: those with
// facts and what they require.
func order(analyzers []*analysis.Analyzer) (all, facts []*analysis.Analyzer) {
	all = requiring(analyzers)
	var withFacts []*analysis.Analyzer
	for _, a := range all {
		if len(a.FactTypes) > 0 {
			withFacts = append(withFacts, a)
		}
	}
	return all, requiring(withFacts)
}

// requiring returns analyzers and everything they require, each after
// what it requires.
func requiring(analyzers []*analysis.Analyzer) []*analysis.Analyzer {
	var out []*analysis.Analyzer
	seen := make(map[*analysis.Analyzer]bool)
	var visit func(a *analysis.Analyzer)
	visit = func(a *analysis.Analyzer) {
		if !seen[a] {
			seen[a] = true
			for _, req := range a.Requires {
				visit(req)
			}
			out = append(out, a)
		}
	}
	for _, a := range analyzers {
		visit(a)
	}
	return out
}
