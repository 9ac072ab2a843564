package plugin_test

import (
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/plugin"
)

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings any
		want     string // in the error; empty for none
	}{
		{"none", nil, ""},
		{"all", map[string]any{
			"lease":   map[string]any{"packages": []any{"github.com/leaseguard/leaseguard/leasepkg/...", "...", ".../lease"}},
			"imports": map[string]any{"ban": []any{"example.com/sdk"}, "allow": []any{"example.com/x"}, "strict": true},
			"clock":   map[string]any{"funcs": []any{"example.com/c.Now"}},
			"fence": map[string]any{"table": "leases", "tables": []any{"orders", "app.audit"},
				"holder-column": "owner", "epoch-column": "term", "expiry-column": "valid_until"},
		}, ""},
		{"bad fence table", map[string]any{"fence": map[string]any{"tables": []any{"orders; drop"}}}, `fence.tables: "orders; drop" is not an SQL name`},
		{"misspelled key", map[string]any{"imports": map[string]any{"stirct": true}}, `unknown field "stirct"`},
		{"bad value", map[string]any{"imports": map[string]any{"ban": []any{"example.com/..."}}}, "a ban is a path prefix"},
		{"wrong type", map[string]any{"imports": map[string]any{"strict": "yes"}}, "cannot unmarshal"},
		{"pattern that matches no package", map[string]any{"lease": map[string]any{"packages": []any{"github.com/leaseguard/leaseguard/leasepkg", "github.com/leaseguard/leaseguard/leaspkg/..."}}},
			`leaseguard settings: lease.packages: "github.com/leaseguard/leaseguard/leaspkg/..." matches no package`},
		{"import path of no package", map[string]any{"lease": map[string]any{"packages": []any{"example.com/lease"}}}, `lease.packages: "example.com/lease" matches no package`},
		{"pattern with a space", map[string]any{"lease": map[string]any{"packages": []any{"a b"}}}, `lease.packages: "a b" is not an import path pattern`},
		{"relative pattern", map[string]any{"imports": map[string]any{"allow": []any{"./x"}}}, `imports.allow: "./x" is a relative pattern`},
		{"function without a package", map[string]any{"clock": map[string]any{"funcs": []any{"nodot"}}}, `clock.funcs: "nodot" is not a function name`},
		{"not a function name", map[string]any{"clock": map[string]any{"funcs": []any{"not a func name"}}}, `clock.funcs: "not a func name" is not a function name`},
		{"bad lease table", map[string]any{"fence": map[string]any{"table": "a b"}}, `fence.table: "a b" is not an SQL name`},
		{"bad holder column", map[string]any{"fence": map[string]any{"holder-column": "x;y"}}, `fence.holder-column: "x;y" is not a column name`},
		{"bad epoch column", map[string]any{"fence": map[string]any{"epoch-column": "term-id"}}, `fence.epoch-column: "term-id" is not a column name`},
		{"bad expiry column", map[string]any{"fence": map[string]any{"expiry-column": "l.expires_at"}}, `fence.expiry-column: "l.expires_at" is not a column name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plugin.New(tc.settings)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("New: %v, want an error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			as, err := p.BuildAnalyzers()
			if err != nil || len(as) != 1 {
				t.Fatalf("BuildAnalyzers: %d analyzers, %v", len(as), err)
			}
		})
	}
}
