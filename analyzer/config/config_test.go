package config_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

func TestMatcher(t *testing.T) {
	t.Parallel()
	m := config.NewMatcher(config.Patterns{"example.com/lease/...", "example.com/*x", "net/...test", "exact.org/p"})
	for path, want := range map[string]bool{
		"example.com/lease":         true, // a trailing /... also matches the path before it
		"example.com/lease/store":   true,
		"example.com/leases":        false,
		"example.com/*x":            true, // only ... is a wildcard
		"example.com/ax":            false,
		"net/http/httptest":         true,
		"net/http":                  false,
		"exact.org/p":               true,
		"exact.org/p/q":             false,
		"github.com/x/example.com/": false,
	} {
		if got := m.Match(path); got != want {
			t.Errorf("Match(%q) = %v, want %v", path, got, want)
		}
	}
	if config.NewMatcher(nil).Match("anything") {
		t.Error("an empty pattern list matched")
	}
}

// flagSet binds every setting of c to one flag set, as -RULE.KEY.
func flagSet(c *config.Config) *flag.FlagSet {
	all := flag.NewFlagSet("leaseguard", flag.ContinueOnError)
	all.SetOutput(io.Discard)
	for _, rule := range []string{"lease", "imports", "clock", "fence"} {
		var fs flag.FlagSet
		c.Flags(rule, &fs)
		fs.VisitAll(func(f *flag.Flag) { all.Var(f.Value, rule+"."+f.Name, f.Usage) })
	}
	return all
}

func TestFlags(t *testing.T) {
	t.Parallel()
	c := config.Default()
	fs := flagSet(c)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	want := []string{"clock.funcs", "clock.sql-interfaces", "fence.epoch-column", "fence.expiry-column", "fence.holder-column", "fence.table", "fence.tables",
		"imports.allow", "imports.ban", "imports.strict", "imports.tests", "lease.explain", "lease.notes", "lease.packages"}
	if !slices.Equal(names, want) {
		t.Fatalf("flags %q, want %q", names, want)
	}
	err := fs.Parse([]string{
		"-lease.packages= a.com/x , b.com/y/... ,...,.../internal",
		"-imports.ban=example.com/sdk", "-imports.allow=net/http/...test", "-imports.strict", "-imports.tests",
		"-clock.funcs=example.com/c.Now,example.com/c.Clock.Now,gopkg.in/yaml.v3.T.Now,time.Now",
		"-clock.sql-interfaces=example.com/repo.Store,gopkg.in/db.v2.Querier",
		"-fence.table=app.leases, app.locks", `-fence.tables=orders, billing.invoices, "Audit Log", example.com/app.Config.History`,
		`-fence.holder-column="Owner"`, "-fence.epoch-column=term", "-fence.expiry-column=valid_until",
	})
	if err != nil {
		t.Fatal(err)
	}
	want2 := config.Config{
		Lease:   config.Lease{Packages: config.Patterns{"a.com/x", "b.com/y/...", "...", ".../internal"}},
		Imports: config.Imports{Ban: config.Patterns{"example.com/sdk"}, Allow: config.Patterns{"net/http/...test"}, Strict: true, Tests: true},
		Clock: config.Clock{Funcs: config.Patterns{"example.com/c.Now", "example.com/c.Clock.Now", "gopkg.in/yaml.v3.T.Now", "time.Now"},
			SQLInterfaces: []string{"example.com/repo.Store", "gopkg.in/db.v2.Querier"}},
		Fence: config.Fence{Table: config.Names{"app.leases", "app.locks"}, Tables: config.Names{"orders", "billing.invoices", `"Audit Log"`, "example.com/app.Config.History"},
			HolderColumn: `"Owner"`, EpochColumn: "term", ExpiryColumn: "valid_until"},
	}
	if !reflect.DeepEqual(*c, want2) {
		t.Fatalf("parsed settings\n%+v\nwant\n%+v", *c, want2)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate after good flags: %v", err)
	}
	if got := fs.Lookup("fence.tables").Value.String(); got != `orders,billing.invoices,"Audit Log",example.com/app.Config.History` {
		t.Errorf("-fence.tables String = %q", got)
	}
}

// bad are bad values for every setting that takes one, and why each is bad.
var bad = []struct{ setting, value, why string }{
	{"lease.packages", "a b", "is not an import path pattern"},
	{"lease.packages", "./rel", "is a relative pattern"},
	{"lease.packages", "/abs", "empty path element"},
	{"lease.packages", "../x/...", "is a relative pattern"},
	{"lease.packages", ".", "is a relative pattern"},
	{"lease.packages", "a//b", "empty path element"},
	{"imports.ban", "example.com/...", "a ban is a path prefix"},
	{"imports.ban", "a/", "empty path element"},
	{"imports.allow", "a'b", "is not an import path pattern"},
	{"clock.funcs", "nodot", "no package path"},
	{"clock.funcs", "not a func name", "is not a function name"},
	{"clock.funcs", "example.com/c", "no package path"},
	{"clock.funcs", "example.com/c.Now()", `"Now()" is not a Go identifier`},
	{"clock.funcs", "example.com/c....", "is not a wildcard"},
	{"clock.funcs", ".Now", "no package path"},
	{"fence.table", "orders; drop", "is not an SQL name"},
	{"fence.table", "a.b.c", "is not an SQL name"},
	{"fence.tables", "1st", "is not an SQL name"},
	{"fence.table", `"unterminated`, "is not an SQL name"},
	{"fence.table", `""`, "is not an SQL name"},
	{"fence.tables", `"a"b"`, "is not an SQL name"},
	{"fence.table", "example.com/app.Config.Lease.Table", "is not a Go field or variable"},
	{"fence.table", "example.com/app", "is not a Go field or variable"},
	{"fence.tables", "example.com/app.Config.1st", "is not a Go field or variable"},
	{"fence.table", "example.com/.../app.Table", "is not a Go field or variable"},
	{"clock.sql-interfaces", "nodot", "is not an interface name"},
	{"clock.sql-interfaces", "example.com/repo.Not an ident", "is not an identifier"},
	{"clock.sql-interfaces", "./rel.Repo", "is a relative pattern"},
	{"fence.holder-column", "owner id", "is not a column name"},
	{"fence.epoch-column", "term-id", "is not a column name"},
	{"fence.expiry-column", "lease.expires_at", "is not a column name"},
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	for _, b := range bad {
		t.Run(b.setting+"="+b.value, func(t *testing.T) {
			// Through the flag: Set fails, and the flag set names the
			// flag and the value.
			c := config.Default()
			err := flagSet(c).Parse([]string{"-" + b.setting + "=" + b.value})
			if err == nil || !strings.Contains(err.Error(), "-"+b.setting) || !strings.Contains(err.Error(), b.why) {
				t.Errorf("flag: %v, want an error naming -%s and saying %q", err, b.setting, b.why)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("a rejected flag value was stored: %v", err)
			}
			// Through the struct, as golangci-lint's settings decode.
			rule, key, _ := strings.Cut(b.setting, ".")
			var doc string
			if strings.HasSuffix(key, "column") || key == "table" {
				doc = fmt.Sprintf(`{%q: {%q: %q}}`, rule, key, b.value)
			} else {
				doc = fmt.Sprintf(`{%q: {%q: [%q]}}`, rule, key, b.value)
			}
			if err := json.Unmarshal([]byte(doc), c); err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			if err == nil || !strings.Contains(err.Error(), b.setting+": ") || !strings.Contains(err.Error(), b.why) {
				t.Errorf("Validate: %v, want an error naming %s and saying %q", err, b.setting, b.why)
			}
		})
	}
}

func TestMatchEverything(t *testing.T) {
	t.Parallel()
	m := config.NewMatcher(config.Patterns{"..."})
	for _, path := range []string{"std", "net/http", "example.com/a/b"} {
		if !m.Match(path) {
			t.Errorf("... does not match %q", path)
		}
	}
}

// A table setting decodes from a list, or from a string of names as one
// lease table is usually written.
func TestNamesDecode(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]config.Names{
		`{"fence": {"table": "leases"}}`:                    {"leases"},
		`{"fence": {"table": "leases, locks"}}`:             {"leases", "locks"},
		`{"fence": {"table": ["leases", "app.Cfg.Table"]}}`: {"leases", "app.Cfg.Table"},
		`{"fence": {"table": ""}}`:                          nil,
	} {
		c := config.Default()
		if err := json.Unmarshal([]byte(doc), c); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !slices.Equal(c.Fence.Table, want) {
			t.Errorf("%s: table %q, want %q", doc, c.Fence.Table, want)
		}
	}
	c := config.Default()
	if err := json.Unmarshal([]byte(`{"fence": {"table": 1}}`), c); err == nil {
		t.Errorf("a number decoded as table names: %q", c.Fence.Table)
	}
}

func TestUnmatched(t *testing.T) {
	ps := config.Patterns{"example.com/a/...", "example.com/b", "example.com/c/...", "example.com/a"}
	got := ps.Unmatched([]string{"example.com/a/x", "example.com/c"})
	want := config.Patterns{"example.com/b", "example.com/a"}
	if !slices.Equal(got, want) {
		t.Errorf("Unmatched = %q, want %q", got, want)
	}
	if got := ps.Unmatched(nil); !slices.Equal(got, ps) {
		t.Errorf("Unmatched(nil) = %q, want every pattern", got)
	}
}
