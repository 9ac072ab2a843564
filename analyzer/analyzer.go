// Package analyzer assembles leaseguard's rules.
//
// Each rule is one *analysis.Analyzer in a package of its own under
// analyzer/; what they share lives once: lease-package selection and
// suppression in analyzer/lease, settings in analyzer/config. Drivers (the
// leaseguard binary, the golangci-lint plugin) call New.
package analyzer

import (
	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/clock"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/fence"
	"github.com/leaseguard/leaseguard/analyzer/imports"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Parser names the PostgreSQL parser built in: "cgo", libpg_query compiled
// in as C, or "wasm", the same compiled to WebAssembly and run by wazero,
// in builds without cgo (whose first parse in a process loads it from the
// user's cache directory, or compiles it there).
const Parser = pgsql.Backend

// New returns a fresh set of analyzers whose flags bind to cfg: the lease
// analyzer, which selects lease packages and checks directives, then one
// analyzer per rule.
func New(cfg *config.Config) []*analysis.Analyzer {
	l := lease.New(cfg, []string{imports.Name, clock.Name, fence.Name}) // the rules that //leaseguard:allow may name
	return []*analysis.Analyzer{l, imports.New(cfg, l), clock.New(cfg, l), fence.New(cfg, l)}
}
