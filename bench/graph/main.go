// Command graph runs leaseguard's rules on one package, marked as a lease
// package, with its test variants and every package they import, the way
// the golangci-lint plugin does (internal/depcheck), or with -checker the
// way it did before (go/packages' LoadAllSyntax and checker.Analyze). It
// prints the findings, sorted, and on standard error the time the
// analysis took. bench/graph.sh compares the two.
//
//	graph [-checker] DIR PACKAGE
package main

import (
	"flag"
	"fmt"
	"go/token"
	"log"
	"os"
	"slices"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/depcheck"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("graph: ")
	withChecker := flag.Bool("checker", false, "load the graph with go/packages and run checker.Analyze")
	flag.Parse()
	if flag.NArg() != 2 {
		log.Fatal("usage: graph [-checker] DIR PACKAGE")
	}
	dir, path := flag.Arg(0), flag.Arg(1)
	var cfg config.Config
	cfg.Lease.Packages = config.Patterns{path}
	rules := analyzer.New(&cfg)
	start := time.Now()
	run := viaDepcheck
	if *withChecker {
		run = viaChecker
	}
	out, err := run(dir, path, rules)
	if err != nil {
		log.Fatal(err)
	}
	elapsed := time.Since(start)
	slices.Sort(out)
	for _, line := range out {
		fmt.Println(line)
	}
	fmt.Fprintf(os.Stderr, "%d findings in %.2f s\n", len(out), elapsed.Seconds())
}

func line(id string, fset *token.FileSet, a *analysis.Analyzer, d analysis.Diagnostic) string {
	return fmt.Sprintf("%s %s: %s: %s", id, fset.Position(d.Pos), a.Name, d.Message)
}

func viaDepcheck(dir, path string, rules []*analysis.Analyzer) ([]string, error) {
	roots, err := depcheck.Run(dir, path, nil, rules)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range roots {
		for _, d := range r.Diagnostics {
			out = append(out, line(r.ID, r.Fset, d.Analyzer, d.Diagnostic))
		}
	}
	return out, nil
}

func viaChecker(dir, path string, rules []*analysis.Analyzer) ([]string, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadAllSyntax, Dir: dir, Tests: true}, path)
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("%s does not load", path)
	}
	graph, err := checker.Analyze(rules, pkgs, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, act := range graph.Roots {
		if act.Err != nil {
			return nil, fmt.Errorf("%s: %w", act, act.Err)
		}
		if act.Package.ID == path+".test" {
			continue // go test's generated main
		}
		for _, d := range act.Diagnostics {
			out = append(out, line(act.Package.ID, act.Package.Fset, act.Analyzer, d))
		}
	}
	return out, nil
}
