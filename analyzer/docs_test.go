package analyzer_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestURLs checks that every analyzer of leaseguard's, the rules and what
// they require, links to a file of the repository (and a heading of it),
// so that a SARIF help link or an IDE's "more" never leads nowhere.
func TestURLs(t *testing.T) {
	seen := map[*analysis.Analyzer]bool{}
	var visit func(a *analysis.Analyzer, ours bool)
	visit = func(a *analysis.Analyzer, ours bool) {
		if seen[a] {
			return
		}
		seen[a] = true
		switch {
		case strings.HasPrefix(a.URL, "https://github.com/leaseguard/"):
			if err := testdir.CheckURL(a.URL); err != nil {
				t.Errorf("analyzer %s: %v", a.Name, err)
			}
		case ours:
			t.Errorf("analyzer %s: URL %q, want a link into %s", a.Name, a.URL, testdir.RepoURL)
		}
		for _, r := range a.Requires {
			visit(r, false)
		}
	}
	for _, a := range analyzer.New(config.Default()) {
		visit(a, true)
	}
	if len(seen) < 4 {
		t.Errorf("visited %d analyzers, want the four of analyzer.New and what they require", len(seen))
	}
}
