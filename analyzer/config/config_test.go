package config_test

import (
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

func TestPatternsSet(t *testing.T) {
	t.Parallel()
	var p config.Patterns
	if err := p.Set(" a.com/x , b.com/y/... ,"); err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "a.com/x,b.com/y/..." {
		t.Fatalf("Set then String = %q", got)
	}
	for _, bad := range []string{"a b", "./rel", "/abs", "a//b", "a/"} {
		if err := p.Set(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Set(%q): %v, want an error naming it", bad, err)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c.Imports.Ban = config.Patterns{"x.com/..."}
	c.Lease.Packages = config.Patterns{"bad pattern"}
	err := c.Validate()
	for _, want := range []string{`imports.ban: "x.com/...": a ban is a path prefix`, `lease.packages: "bad pattern" is not an import path pattern`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want it to contain %q", err, want)
		}
	}
}

func TestNamesSet(t *testing.T) {
	t.Parallel()
	var n config.Names
	if err := n.Set(` orders , billing.invoices , "Quoted", "My ""x""".t ,`); err != nil {
		t.Fatal(err)
	}
	if got := n.String(); got != `orders,billing.invoices,"Quoted","My ""x""".t` {
		t.Fatalf("Set then String = %q", got)
	}
	for _, bad := range []string{"orders; drop", "a.b.c", `"unterminated`, `""`, `"a"b"`, "1st"} {
		if err := n.Set(bad); err == nil || !strings.Contains(err.Error(), "is not an SQL name") {
			t.Errorf("Set(%q): %v, want an error", bad, err)
		}
	}
	c := config.Default()
	c.Fence.EpochColumn = "term-id"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "fence.epoch-column") {
		t.Errorf("Validate with a bad column: %v", err)
	}
}
