// Package lazyssa builds a package's SSA form only when a rule asks for
// it. Under go vet every dependency of every package is analysed for facts,
// the standard library included, and building SSA for all of them costs
// more than type checking them; most have nothing that a rule could learn
// from. The rules decide from syntax and types whether a package can matter,
// and ask for SSA only then; the rules of one package share what is built.
package lazyssa

import (
	"reflect"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
)

// SSA builds, on the first call of Get, what buildssa would have.
type SSA struct {
	get func() (*buildssa.SSA, error)
}

// Get returns the package's SSA form, building it on the first call.
func (s *SSA) Get() (*buildssa.SSA, error) { return s.get() }

// Analyzer returns a *SSA for the package. It requires what buildssa
// requires (ctrlflow, whose facts tell SSA which calls never return), and
// builds with buildssa's own code.
var Analyzer = &analysis.Analyzer{
	Name: "lazyssa",
	Doc: `build SSA-form IR when a rule asks for it

The result builds what buildssa builds, on demand, once per package.`,
	URL:        "https://github.com/leaseguard/leaseguard#performance",
	Requires:   []*analysis.Analyzer{ctrlflow.Analyzer},
	ResultType: reflect.TypeFor[*SSA](),
	Run: func(pass *analysis.Pass) (any, error) {
		// The pass, its syntax, types and ctrlflow result stay valid while
		// the analyzers that require this one run on the package.
		return &SSA{get: sync.OnceValues(func() (*buildssa.SSA, error) {
			res, err := buildssa.Analyzer.Run(pass)
			if err != nil {
				return nil, err
			}
			return res.(*buildssa.SSA), nil
		})}, nil
	},
}
