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
		{"rows affected of fenced writes", nil, []string{"fence/rows"}},
		{"SQL built from parts", nil, []string{"fence/text"}},
		{"only the tables named by setting", func(c *config.Config) { c.Fence.Tables = config.Names{"orders", "billing.invoices"} }, []string{"fence/tables"}},
		{"lease table and columns named by setting", func(c *config.Config) {
			c.Fence = config.Fence{Table: config.Names{"leadership"}, HolderColumn: "owner", EpochColumn: "term", ExpiryColumn: "valid_until"}
		}, []string{"fence/columns"}},
		{"two lease tables of one shape named by setting", func(c *config.Config) {
			c.Fence = config.Fence{Table: config.Names{"instances", "activities"}, HolderColumn: "worker", ExpiryColumn: "locked_until"}
		}, []string{"fence/twotables"}},
		{"not a lease package", nil, []string{"fence/notlease"}},
		{"the lease table found from the renewal", nil, []string{"fence/discover"}},
		{"cases it knowingly misses", nil, []string{"fence/limitations"}},
		{"the fences that leasepkg runs on PostgreSQL", nil, []string{"fence/proof"}},
		{"lease tables named at run time, found by shape", nil, []string{"fence/runtime"}},
		{"guarded tables from evidence", nil, []string{"fence/evidence"}},
		{"a job queue's rows as leases", nil, []string{"fence/jobs"}},
		{"a fence taken once for the transaction", nil, []string{"fence/txfence"}},
		{"sqlc-generated files", nil, []string{"fence/sqlc"}},
		{"another database's SQL", nil, []string{"fence/dialect"}},
		{"quoted names", func(c *config.Config) { c.Fence.Table = config.Names{`"Lease"`} }, []string{"fence/quoted"}},
		{"many texts through a helper, and a text too deep to parse", nil, []string{"fence/manytexts"}},
		{"renewals whose failure is only logged", nil, []string{"fence/heartbeat/store", "fence/heartbeat/locker"}},
		{"a query builder's statements, the lease table named by its Go field", func(c *config.Config) { c.Fence.Table = config.Names{"fence/builder.Config.LeaseTable"} }, []string{"fence/builder"}},
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
