// Command noopvet is a vet tool with one analyzer that does nothing: run
// under go vet -vettool, it costs what type checking and the vet driver
// cost, the floor that bench/vet.sh measures leaseguard against.
package main

import (
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/unitchecker"
)

var noop = &analysis.Analyzer{
	Name: "noop",
	Doc:  "do nothing\n\nThe floor of a vet tool's cost: the driver and type checking alone.",
	URL:  "https://github.com/leaseguard/leaseguard/blob/main/docs/performance.md#the-analyzer",
	Run:  func(*analysis.Pass) (any, error) { return nil, nil },
}

func main() { unitchecker.Main(noop) }
