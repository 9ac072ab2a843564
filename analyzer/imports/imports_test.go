package imports_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/imports"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// rule returns a fresh imports analyzer whose settings edit changes.
func TestImports(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		pkgs []string
	}{
		{"direct imports in every form", nil, []string{"imports/direct"}},
		{"transitive chains through one and two packages", nil, []string{"imports/transitive"}},
		{"a chain to net/http used as a server is fine by default", nil, []string{"imports/serveronly"}},
		{"strict reports a chain to net/http used as a server", func(c *config.Config) { c.Imports.Strict = true }, []string{"imports/strict"}},
		{"allowed packages cut chains", func(c *config.Config) {
			c.Imports.Allow = config.Patterns{"example.com/explain", "net/http/...test"}
		}, []string{"imports/allowcut"}},
		{"extra bans", func(c *config.Config) { c.Imports.Ban = config.Patterns{"example.com/vendorsdk"} }, []string{"imports/extraban"}},
		{"suppressions", nil, []string{"imports/suppress"}},
		{"test files and the external test package are not checked by default", nil, []string{"imports/tests"}},
		{"the tests setting checks test files and the external test package", func(c *config.Config) { c.Imports.Tests = true }, []string{"imports/testson"}},
		{"client use counts, building a request or naming a type does not", nil, []string{"imports/httpuse"}},
		{"gRPC codes, status and types are not a client", nil, []string{"imports/grpctypes"}},
		{"gRPC connections are a client, direct and transitive", nil, []string{"imports/grpcclient"}},
		{"a package selected by pattern", func(c *config.Config) { c.Lease.Packages = config.Patterns{"imports/pat..."} }, []string{"imports/patterned"}},
		{"packages that are not lease packages", nil, []string{"notlease", "release"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, imports.Name, tc.edit), tc.pkgs...)
		})
	}
}

func TestValidate(t *testing.T) {
	if err := analysis.Validate(analyzer.New(config.Default())); err != nil {
		t.Fatal(err)
	}
}
