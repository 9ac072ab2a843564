package fence_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/fence"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestFence(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		pkgs []string
	}{
		{"writes without a complete fence", nil, []string{"fence/writes"}},
		{"correct fences in several shapes", nil, []string{"fence/fenced"}},
		{"FOR KEY SHARE where a schema makes the epoch a key", nil, []string{"fence/keyshare", "fence/keyindex", "fence/keypartial"}},
		{"statements on the lease table", nil, []string{"fence/lease"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, fence.Name, tc.edit), tc.pkgs...)
		})
	}
}

func TestFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, testdir.Root(), ruletest.Analyzer(t, fence.Name, nil), "fence/lock", "fence/keyshare")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := analysis.Validate([]*analysis.Analyzer{ruletest.Analyzer(t, fence.Name, nil)}); err != nil {
		t.Fatal(err)
	}
}
