package clock_test

import (
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/clock"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/ruletest"
)

func TestClock(t *testing.T) {
	ruletest.Run(t, clock.Name, []ruletest.Case{
		{Name: "flows into SQL", Pkgs: []string{"clock/flows"}},
		{Name: "generated files and cgo", Pkgs: []string{"clock/generated"}},
		{Name: "reads that decide nothing", Pkgs: []string{"clock/negative"}},
		{Name: "stamps and times that decide", Pkgs: []string{"clock/stamps"}},
		{Name: "literals that store into captured variables", Pkgs: []string{"clock/captured"}},
		{Name: "a query builder's statements", Pkgs: []string{"clock/builder"}},
		{Name: "not a lease package", Pkgs: []string{"clock/notlease"}},
		{Name: "facts of helpers in other packages", Pkgs: []string{"example.com/clockutil", "example.com/sqlutil"}},
		{Name: "facts carried between a package's functions", Pkgs: []string{"example.com/clockspread", "example.com/clockinit"}},
		{Name: "flows it knowingly misses", Pkgs: []string{"clock/limitations"}},
		{Name: "interfaces that execute SQL", Edit: func(c *config.Config) {
			c.Clock.SQLInterfaces = []string{"example.com/driver.Executor", "example.com/driver.Store"}
		}, Pkgs: []string{"example.com/repo", "clock/repository"}},
		{Name: "interfaces that are database handles by their own methods", Pkgs: []string{"clock/dbhandle"}},
		{Name: "function literals passed to a call", Edit: func(c *config.Config) { c.Clock.SQLInterfaces = []string{"example.com/driver.Executor"} }, Pkgs: []string{"clock/literals"}},
		{Name: "a clock named by setting", Edit: func(c *config.Config) { c.Clock.Funcs = config.Patterns{"clock/extra.Ticks"} }, Pkgs: []string{"clock/extra"}},
	})
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
