package clock_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/clock"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		pkgs []string
	}{
		{"flows into SQL", nil, []string{"clock/flows"}},
		{"generated files and cgo", nil, []string{"clock/generated"}},
		{"reads that decide nothing", nil, []string{"clock/negative"}},
		{"not a lease package", nil, []string{"clock/notlease"}},
		{"facts of helpers in other packages", nil, []string{"example.com/clockutil", "example.com/sqlutil"}},
		{"facts carried between a package's functions", nil, []string{"example.com/clockspread", "example.com/clockinit"}},
		{"flows it knowingly misses", nil, []string{"clock/limitations"}},
		{"a clock named by setting", func(c *config.Config) { c.Clock.Funcs = config.Patterns{"clock/extra.Ticks"} }, []string{"clock/extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, clock.Name, tc.edit), tc.pkgs...)
		})
	}
}
