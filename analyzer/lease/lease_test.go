package lease_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestDirectives(t *testing.T) {
	analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, lease.Name, nil), "directives", "directives/nearmiss")
}
