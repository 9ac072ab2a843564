package clock_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/clock"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
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
		{"stamps and times that decide", nil, []string{"clock/stamps"}},
		{"literals that store into captured variables", nil, []string{"clock/captured"}},
		{"a query builder's statements", nil, []string{"clock/builder"}},
		{"not a lease package", nil, []string{"clock/notlease"}},
		{"facts of helpers in other packages", nil, []string{"example.com/clockutil", "example.com/sqlutil"}},
		{"facts carried between a package's functions", nil, []string{"example.com/clockspread", "example.com/clockinit"}},
		{"flows it knowingly misses", nil, []string{"clock/limitations"}},
		{"interfaces that execute SQL", func(c *config.Config) { c.Clock.SQLInterfaces = []string{"example.com/driver.Executor"} }, []string{"example.com/repo", "clock/repository"}},
		{"function literals passed to a call", func(c *config.Config) { c.Clock.SQLInterfaces = []string{"example.com/driver.Executor"} }, []string{"clock/literals"}},
		{"a clock named by setting", func(c *config.Config) { c.Clock.Funcs = config.Patterns{"clock/extra.Ticks"} }, []string{"clock/extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, clock.Name, tc.edit), tc.pkgs...)
		})
	}
}

func TestSQLInterfacesSetting(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  string // in the error; empty for none
	}{
		{"example.com/app/store.Querier", ""},
		{"example.com/app/store.Querier, github.com/riverqueue/river/riverdriver.Executor", ""},
		{"Querier", "want pkg/path.Interface"},
		{"example.com/store.", `"" is not an identifier`},
		{"example.com/store.Que-rier", `"Que-rier" is not an identifier`},
		{".Querier", "no package path"},
		{"example.com/store/.Querier", "empty path element"},
		{"./store.Querier", "is a relative pattern"},
		{"example.com/st ore.Querier", "is not an import path pattern"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			cfg := config.Default()
			a := clock.New(cfg, lease.New(cfg, []string{clock.Name}))
			err := a.Flags.Set("sql-interfaces", tc.value)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Set(%q): %v, want an error containing %q", tc.value, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cfg.Clock.SQLInterfaces, ","); got != strings.ReplaceAll(tc.value, " ", "") {
				t.Errorf("Set(%q) gave %q", tc.value, got)
			}
		})
	}
}

func TestSQLInterfacesSettingNotFromFlag(t *testing.T) {
	t.Parallel()
	// golangci-lint decodes its settings into the struct, past the flag:
	// Validate, which the plugin calls, checks them there.
	c := config.Default()
	c.Clock.SQLInterfaces = []string{"Querier"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `clock.sql-interfaces: "Querier" is not an interface name`) {
		t.Errorf("Validate: %v, want an error for the malformed name", err)
	}
}
