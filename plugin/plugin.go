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
// Unknown keys and bad values are errors. Only lease packages, and packages
// with a directive, cost more than golangci-lint's own load (see guard.go).
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
	return &linter{cfg: &cfg, rules: analyzer.New(&cfg)}, nil
}

type linter struct {
	cfg   *config.Config
	rules []*analysis.Analyzer // bound to cfg
}

// BuildAnalyzers returns the plugin's one analyzer, which runs every rule,
// bound to the decoded settings, on the packages that can have a finding
// (see guard.go).
func (l *linter) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{newGuard(l.cfg, l.rules).analyzer}, nil
}

// GetLoadMode asks for the linted packages' types, for their import
// paths; the rules load what they need themselves (see guard.go).
func (*linter) GetLoadMode() string { return register.LoadModeTypesInfo }
