// Package ruletest builds analyzers for the rules' tests and runs them over
// the fixtures.
package ruletest

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/testdir"
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

// Case is one run of a rule over fixture packages.
type Case struct {
	// Name names the subtest.
	Name string
	// Edit, if not nil, changes the default settings before the run.
	Edit func(*config.Config)
	// Pkgs are the fixture packages, under the top-level testdata's src,
	// that the run checks against their // want comments.
	Pkgs []string
}

// Run runs, for each case, a subtest that checks the case's packages with
// the analyzer called rule from a fresh set whose settings the case's Edit
// changes.
func Run(t *testing.T, rule string, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			analysistest.Run(t, testdir.Root(), Analyzer(t, rule, tc.Edit), tc.Pkgs...)
		})
	}
}
