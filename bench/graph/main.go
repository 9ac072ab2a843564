// Command graph runs leaseguard's rules on one package, marked as a lease
// package, with its test variants and every package they import, the way
// the golangci-lint plugin does (internal/depcheck), or with -checker the
// way it did before (go/packages' LoadAllSyntax and checker.Analyze:
// depcheck.Reference). It
// prints the findings, sorted, and on standard error the time the
// analysis took. bench/graph.sh compares the two.
//
//	graph [-checker] DIR PACKAGE
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"time"

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
	var roots []*depcheck.Root
	var err error
	if *withChecker {
		roots, err = depcheck.Reference(&depcheck.Config{Dir: dir, Tests: true}, []string{path}, rules)
	} else {
		roots, err = depcheck.Run(dir, path, nil, rules)
	}
	if err != nil {
		log.Fatal(err)
	}
	elapsed := time.Since(start)
	var out []string
	for _, r := range roots {
		for _, d := range r.Diagnostics {
			out = append(out, fmt.Sprintf("%s %s: %s: %s", r.ID, r.Fset.Position(d.Pos), d.Analyzer.Name, d.Message))
		}
	}
	slices.Sort(out)
	for _, line := range out {
		fmt.Println(line)
	}
	fmt.Fprintf(os.Stderr, "%d findings in %.2f s\n", len(out), elapsed.Seconds())
}
