// Package plugin is leaseguard's golangci-lint module plugin: one linter,
// leaseguard, that runs every rule with its settings from .golangci.yml
// (linters.settings.custom.leaseguard.settings), the same settings that the
// analyzers' flags fill under go vet:
//
//	linters:
//	  settings:
//	    custom:
//	      leaseguard:
//	        type: module
//	        settings:
//	          lease: {packages: [example.com/app/lease/...]}
//	          imports: {allow: [example.com/app/explain], strict: true}
//	          clock: {funcs: [example.com/app/clockutil.Now]}
//	          fence: {table: worker_leases, tables: [orders]}
//
// Unknown keys and bad values are errors.
package plugin

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Name is the linter's name in .golangci.yml.
const Name = "leaseguard"

func init() { register.Plugin(Name, New) }

// New decodes and validates settings and returns the plugin.
func New(settings any) (register.LinterPlugin, error) {
	cfg, err := register.DecodeSettings[config.Config](settings)
	if err != nil {
		return nil, fmt.Errorf("leaseguard settings: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("leaseguard settings: %w", err)
	}
	return &linter{cfg: &cfg}, nil
}

type linter struct{ cfg *config.Config }

// BuildAnalyzers returns every rule, bound to the decoded settings.
func (l *linter) BuildAnalyzers() ([]*analysis.Analyzer, error) { return analyzer.New(l.cfg), nil }

// GetLoadMode asks for type information: the rules need types and facts.
func (*linter) GetLoadMode() string { return register.LoadModeTypesInfo }
