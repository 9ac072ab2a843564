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
// Unknown keys and bad values are errors, and so is a lease.packages
// pattern that names no package. Only lease packages, and packages
// with a directive, cost more than golangci-lint's own load (see guard.go).
package plugin

import (
	"fmt"
	"strings"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/golist"
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
	// A lease.packages pattern that names no package at all (a typo)
	// would check nothing in silence. The plugin sees the linted packages
	// one at a time, with no end of the run at which to tell that a
	// pattern matched none of them, so it asks the go command instead
	// whether the pattern names any package; one that starts with ...
	// would have it walk every module, and is left alone.
	var patterns []string
	for _, p := range cfg.Lease.Packages {
		if !strings.HasPrefix(p, "...") {
			patterns = append(patterns, p)
		}
	}
	if _, none := golist.Lookup(patterns); none != "" {
		return nil, fmt.Errorf("leaseguard settings: lease.packages: %q matches no package: name lease packages by import path, as go list prints them", none)
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
