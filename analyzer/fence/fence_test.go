package fence_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/fence"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestFence(t *testing.T) {
	ruletest.Run(t, fence.Name, []ruletest.Case{
		{Name: "writes without a complete fence", Pkgs: []string{"fence/writes"}},
		{Name: "correct fences in several shapes", Pkgs: []string{"fence/fenced"}},
		{Name: "FOR KEY SHARE where a schema makes the epoch a key", Pkgs: []string{"fence/keyshare", "fence/keyindex", "fence/keypartial"}},
		{Name: "statements on the lease table", Pkgs: []string{"fence/lease"}},
		{Name: "rows affected of fenced writes", Pkgs: []string{"fence/rows"}},
		{Name: "SQL built from parts", Pkgs: []string{"fence/text"}},
		{Name: "only the tables named by setting", Edit: func(c *config.Config) { c.Fence.Tables = config.Names{"orders", "billing.invoices"} }, Pkgs: []string{"fence/tables"}},
		{Name: "lease table and columns named by setting", Edit: func(c *config.Config) {
			c.Fence = config.Fence{Table: config.Names{"leadership"}, HolderColumn: "owner", EpochColumn: "term", ExpiryColumn: "valid_until"}
		}, Pkgs: []string{"fence/columns"}},
		{Name: "two lease tables of one shape named by setting", Edit: func(c *config.Config) {
			c.Fence = config.Fence{Table: config.Names{"instances", "activities"}, HolderColumn: "worker", ExpiryColumn: "locked_until"}
		}, Pkgs: []string{"fence/twotables"}},
		{Name: "not a lease package", Pkgs: []string{"fence/notlease"}},
		{Name: "the lease table found from the renewal", Pkgs: []string{"fence/discover"}},
		{Name: "the lease table's columns read from what its SQL does", Pkgs: []string{"fence/inferred", "fence/inferred/queue", "fence/inferred/heartbeat", "fence/inferred/upsert", "fence/inferred/released", "fence/inferred/offset", "fence/inferred/reaped"}},
		{Name: "a package whose SQL shows no lease table, with -lease.notes", Edit: func(c *config.Config) { c.Lease.Notes = true }, Pkgs: []string{"fence/unchecked", "fence/unchecked/allowed", "fence/inferred", "fence/writes"}},
		{Name: "what the rule understood, with -lease.explain", Edit: func(c *config.Config) { c.Lease.Explain = true }, Pkgs: []string{"fence/explain", "fence/explain/nolease"}},
		{Name: "cases it knowingly misses", Pkgs: []string{"fence/limitations"}},
		{Name: "the fences that leasepkg runs on PostgreSQL", Pkgs: []string{"fence/proof"}},
		{Name: "lease tables named at run time, found by shape", Pkgs: []string{"fence/runtime", "fence/runtime/accessors"}},
		{Name: "guarded tables from evidence", Pkgs: []string{"fence/evidence"}},
		{Name: "a job queue's rows as leases", Pkgs: []string{"fence/jobs"}},
		{Name: "a liveness row, found by the sweep of its holder's locks", Pkgs: []string{"fence/liveness"}},
		{Name: "a fence taken once for the transaction", Pkgs: []string{"fence/txfence"}},
		{Name: "sqlc-generated files", Pkgs: []string{"fence/sqlc"}},
		{Name: "another database's SQL", Pkgs: []string{"fence/dialect"}},
		{Name: "quoted names", Edit: func(c *config.Config) { c.Fence.Table = config.Names{`"Lease"`} }, Pkgs: []string{"fence/quoted"}},
		{Name: "many texts through a helper, and a text too deep to parse", Pkgs: []string{"fence/manytexts"}},
		{Name: "transactions fenced by another package's functions", Pkgs: []string{"fence/fencelib/lib", "fence/fencelib/user"}},
		{Name: "renewals whose failure is only logged", Pkgs: []string{"fence/heartbeat/store", "fence/heartbeat/locker"}},
		{Name: "transactions known by their type", Pkgs: []string{"fence/txtypes"}},
		{Name: "statements sent through sqlx", Pkgs: []string{"fence/sqlx"}},
		{Name: "statements prepared under a name and run by it", Pkgs: []string{"fence/prepared"}},
		{Name: "claims that choose lapsed rows in a subquery or a CTE", Pkgs: []string{"fence/claims"}},
		{Name: "writes on the transaction of callers that lock the lease row first", Edit: func(c *config.Config) {
			c.Fence = config.Fence{Table: config.Names{"shards"}, EpochColumn: "range_id", Tables: config.Names{"executions"}}
		}, Pkgs: []string{"fence/lockedbycaller/plugin", "fence/lockedbycaller/nolock"}},
		{Name: "a renewal on the transaction of callers that lock the lease row first", Pkgs: []string{"fence/lockedbycaller/refresh"}},
		{Name: "a query builder's statements, the lease table named by its Go field", Edit: func(c *config.Config) { c.Fence.Table = config.Names{"fence/builder.Config.LeaseTable"} }, Pkgs: []string{"fence/builder"}},
	})
}

// TestCandidates checks that a finding in each of the texts a variable
// may hold is one finding that points at each of them.
func TestCandidates(t *testing.T) {
	results := analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, fence.Name, nil), "fence/candidates")
	var related []string
	for _, r := range results {
		for _, d := range r.Diagnostics {
			for _, rel := range d.Related {
				p := r.Pass.Fset.Position(rel.Pos)
				related = append(related, fmt.Sprintf("%s:%d %s", filepath.Base(p.Filename), p.Line, rel.Message))
			}
		}
	}
	want := []string{"candidates.go:15 in this SQL", "candidates.go:17 in this SQL"}
	if !slices.Equal(related, want) {
		t.Errorf("related information = %q, want %q", related, want)
	}
}

func TestFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, testdir.Root(), ruletest.Analyzer(t, fence.Name, nil), "fence/lock", "fence/keyshare")
}
