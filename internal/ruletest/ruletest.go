// Package ruletest builds analyzers for the rules' tests.
package ruletest

import (
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Analyzer returns the analyzer called name from a fresh set whose settings
// edit, if not nil, changes first.
func Analyzer(t *testing.T, name string, edit func(*config.Config)) *analysis.Analyzer {
	t.Helper()
	cfg := config.Default()
	if edit != nil {
		edit(cfg)
	}
	for _, a := range analyzer.New(cfg) {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no %s analyzer", name)
	return nil
}
