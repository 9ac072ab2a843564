package lease_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestDirectives(t *testing.T) {
	analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, lease.Name, nil), "directives", "directives/nearmiss")
}

// TestGoNames names, in -fence.table and -fence.tables, Go fields and
// variables of a lease package: those that do not exist are reported.
func TestGoNames(t *testing.T) {
	a := ruletest.Analyzer(t, lease.Name, func(c *config.Config) {
		c.Fence.Table = config.Names{"directives/goname.Store.table", "directives/goname.Store.tabel", "leases"}
		c.Fence.Tables = config.Names{"directives/goname.ordersTable", "directives/goname.orderTable", "example.com/elsewhere.Config.Orders"}
	})
	analysistest.Run(t, testdir.Root(), a, "directives/goname")
}
