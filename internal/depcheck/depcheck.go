// Package depcheck runs analyzers on a package, its test variants and
// every package they import, in one process, the way go vet runs them in a
// process per package: in dependency order, each package parsed and
// type-checked from source against its imports' export data, with only
// the analyzers that have facts (and what they require) on the imports,
// and every analyzer on the package and its variants. Once a package is
// done, only its facts are kept; its syntax, type-checker records and
// results are dropped. What stays is the imports' types, read from export
// data once for all the packages that import them, and the facts: a
// fraction of the memory that go/packages' LoadAllSyntax with
// checker.Analyze holds, the whole graph from source until the analysis
// ends (docs/performance.md has the figures; bench/graph.sh measures
// them).
//
// The go command lists the graph and builds the imports' export data (its
// build cache keeps them), with the environment's GOFLAGS. The test
// variants, and the imports compiled again for the tests, are
// type-checked from source only; so is the package, unless its external
// test imports it through another package, which needs its export data.
package depcheck

import (
	"fmt"
	"go/build"
	"go/token"
	"go/types"
	"runtime"
	"sync"

	"golang.org/x/tools/go/analysis"
)

// A Root is the package, or one of its test variants, and what the
// analyzers reported on it.
type Root struct {
	ID          string   // as go list names it: "p", "p [p.test]", "p_test [p.test]"
	Files       []string // its compiled Go files, absolute
	Fset        *token.FileSet
	Diagnostics []Diagnostic
}

// A Diagnostic is what an analyzer reported, its URL resolved against the
// analyzer's as checker.Analyze resolves it.
type Diagnostic struct {
	Analyzer *analysis.Analyzer
	analysis.Diagnostic
}

// Run analyses the package at path, as seen from dir, with its test
// variants and their imports. sizes are the target's type sizes (nil: the
// gc compiler's for GOARCH). The error says what failed (listing,
// type-checking, or an analyzer) and on which package.
func Run(dir, path string, sizes types.Sizes, analyzers []*analysis.Analyzer) ([]*Root, error) {
	if err := analysis.Validate(analyzers); err != nil {
		return nil, err
	}
	if sizes == nil {
		sizes = types.SizesFor("gc", build.Default.GOARCH)
	}
	pkgs, err := list(dir, "-deps", "-test", "-compiled", "--", path)
	if err != nil {
		return nil, err
	}
	g, err := newGraph(pkgs, path, sizes, analyzers)
	if err != nil {
		return nil, err
	}
	if err := g.export(dir); err != nil {
		return nil, err
	}
	if err := g.run(runtime.GOMAXPROCS(0)); err != nil {
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

	root    *Root            // for the package and its test variants: set at the start, filled by analyse
	keep    bool             // a test variant that another package imports: keep its types
	visible map[string]*node // by path, for a package that can see test variants; nil: path is ID
	facts   *facts           // its facts, once analysed
}

// A universe is the imported packages' types, by path, which every
// type-check shares: each package's export data is read once, and a
// test variant, type-checked from source, is imported as such by the test
// variants above it, which see the same types as it does for the packages
// that both import. Within one graph a path names one package, except
// for the package itself beside its test variant: nothing imports it then.
type universe struct {
	sync.Mutex
	pkgs map[string]*types.Package
}

// newGraph returns the graph of pkgs, which go list -deps -test printed
// for path, to be analysed with analyzers.
func newGraph(pkgs []*listed, path string, sizes types.Sizes, analyzers []*analysis.Analyzer) (*graph, error) {
	g := &graph{byID: make(map[string]*node), sizes: sizes, fset: token.NewFileSet(), types: universe{pkgs: make(map[string]*types.Package)}}
	g.all, g.facts = order(analyzers)
	for _, p := range pkgs {
		if err := p.err(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.ImportPath, err)
		}
		if p.ImportPath == "unsafe" || p.ImportPath == path+".test" {
			continue // no source to check; go test's generated main
		}
		n := &node{listed: p}
		if p.path() == path || p.ForTest == path && p.path() == path+"_test" {
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
// type-checked from source. The package itself is imported only when it
// has no test files of its own and its external test imports it, directly
// or through other packages, which import it from export data like
// any other.
func (g *graph) export(dir string) error {
	args := []string{"-export", "-json=ImportPath,Export,Error", "--"}
	for _, n := range g.nodes {
		if n.ForTest == "" && len(n.importers) > 0 {
			args = append(args, n.ImportPath)
		}
	}
	if len(args) == 3 {
		return nil
	}
	pkgs, err := list(dir, args...)
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
// its imports are done. It returns the first error; packages that import
// a failed one are not analysed.
func (g *graph) run(workers int) error {
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
				if !failed {
					err = g.analyse(n)
				}
				mu.Lock()
				queued--
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
