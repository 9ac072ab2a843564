package depcheck

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// Reference analyses what Analyze analyses the way drivers commonly do,
// with go/packages' LoadAllSyntax and checker.Analyze: the whole graph
// loaded from source and held until the analyzers end. It is what Analyze
// is checked against (this package's tests) and measured against
// (bench/graph.sh). Of cfg it reads Dir, Tests and BuildFlags.
func Reference(cfg *Config, paths []string, analyzers []*analysis.Analyzer) ([]*Root, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadAllSyntax, Dir: cfg.Dir, Tests: cfg.Tests, BuildFlags: cfg.BuildFlags}, paths...)
	if err != nil {
		return nil, err
	}
	var errs []error
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e)
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading %s: %w", paths, errors.Join(errs...))
	}
	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*Root)
	var roots []*Root
	for _, act := range graph.Roots {
		if act.Err != nil {
			return nil, fmt.Errorf("%s: %w", act, act.Err)
		}
		p := act.Package
		if slices.ContainsFunc(paths, func(path string) bool { return p.ID == path+".test" }) {
			continue // go test's generated main
		}
		r := byID[p.ID]
		if r == nil {
			r = &Root{ID: p.ID, Files: p.CompiledGoFiles, Fset: p.Fset}
			byID[p.ID] = r
			roots = append(roots, r)
		}
		for _, d := range act.Diagnostics {
			r.Diagnostics = append(r.Diagnostics, Diagnostic{Analyzer: act.Analyzer, Diagnostic: d})
		}
	}
	return roots, nil
}
