// Package ruletest builds analyzers for the rules' tests and runs them over
// the fixtures.
package ruletest

import (
	"slices"
	"strings"
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

// Run checks the cases' packages with the analyzer called rule: the
// cases with the default settings together, in one run (loading and
// type-checking the fixtures' dependencies, pgx among them, once, not once
// a case), and each case with settings of its own in a run of its own,
// all of the runs in parallel.
func Run(t *testing.T, rule string, cases []Case) {
	t.Helper()
	var names, pkgs []string // of the cases with the default settings
	for _, tc := range cases {
		if tc.Edit == nil {
			names = append(names, tc.Name)
			for _, p := range tc.Pkgs {
				if !slices.Contains(pkgs, p) {
					pkgs = append(pkgs, p)
				}
			}
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			analysistest.Run(t, testdir.Root(), Analyzer(t, rule, tc.Edit), tc.Pkgs...)
		})
	}
	if len(pkgs) > 0 {
		t.Run("default settings", func(t *testing.T) {
			t.Parallel()
			t.Logf("cases: %s", strings.Join(names, "; "))
			analysistest.Run(t, testdir.Root(), Analyzer(t, rule, nil), pkgs...)
		})
	}
}
