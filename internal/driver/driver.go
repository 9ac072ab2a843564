// Package driver is the leaseguard command: under go vet -vettool it speaks
// the unitchecker protocol; run directly, it loads packages by pattern and
// analyzes them with facts, like any multichecker.
//
// Exit codes, run directly: 0 no findings, 3 findings, 1 a tool error (a
// package that does not compile, a pattern that matches nothing), 2 a bad
// flag. With -json findings are printed as JSON and the exit code is 0
// unless the tool failed; so with -format sarif, which writes one SARIF
// 2.1.0 run for GitHub code scanning. Under go vet, vet itself reports and sets the
// exit code (1 with findings; 0 with go vet -json).
package driver

import (
	"fmt"
	"os"

	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Main runs the command and does not return.
func Main() {
	// -C dir, as the go command takes it: change to dir before anything
	// else, so that patterns are read in another module.
	if len(os.Args) > 2 && os.Args[1] == "-C" {
		if err := os.Chdir(os.Args[2]); err != nil {
			fmt.Fprintf(os.Stderr, "leaseguard: -C: %v\n", err)
			os.Exit(2)
		}
		os.Args = append(os.Args[:1], os.Args[3:]...)
	}
	analyzers := analyzer.New(config.Default())
	switch sarif, err := wantsSARIF(os.Args[1:]); {
	case err != nil:
		fmt.Fprintf(os.Stderr, "leaseguard: %v\n", err)
		os.Exit(2)
	case sarif:
		os.Exit(runSARIF(os.Args[1:], analyzers, os.Stdout, os.Stderr))
	}
	multichecker.Main(analyzers...)
}
