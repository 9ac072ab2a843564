package imports_test

import (
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/imports"
	"github.com/leaseguard/leaseguard/internal/ruletest"
)

func TestImports(t *testing.T) {
	ruletest.Run(t, imports.Name, []ruletest.Case{
		{Name: "direct imports in every form", Pkgs: []string{"imports/direct"}},
		{Name: "transitive chains through one and two packages", Pkgs: []string{"imports/transitive"}},
		{Name: "a chain to net/http used as a server is fine by default", Pkgs: []string{"imports/serveronly"}},
		{Name: "strict reports a chain to net/http used as a server", Edit: func(c *config.Config) { c.Imports.Strict = true }, Pkgs: []string{"imports/strict"}},
		{Name: "allowed packages cut chains", Edit: func(c *config.Config) {
			c.Imports.Allow = config.Patterns{"example.com/explain", "net/http/...test"}
		}, Pkgs: []string{"imports/allowcut"}},
		{Name: "extra bans", Edit: func(c *config.Config) { c.Imports.Ban = config.Patterns{"example.com/vendorsdk"} }, Pkgs: []string{"imports/extraban"}},
		{Name: "suppressions", Pkgs: []string{"imports/suppress"}},
		{Name: "test files and the external test package are not checked by default", Pkgs: []string{"imports/tests"}},
		{Name: "the tests setting checks test files and the external test package", Edit: func(c *config.Config) { c.Imports.Tests = true }, Pkgs: []string{"imports/testson"}},
		{Name: "client use counts, building a request or naming a type does not", Pkgs: []string{"imports/httpuse"}},
		{Name: "gRPC codes, status and types are not a client", Pkgs: []string{"imports/grpctypes"}},
		{Name: "gRPC connections are a client, direct and transitive", Pkgs: []string{"imports/grpcclient"}},
		{Name: "HTTP/2 framers on a dialled connection and websocket dialers are clients, direct and transitive", Pkgs: []string{"imports/wsclient"}},
		{Name: "websocket and HTTP/2 servers are fine by default", Pkgs: []string{"imports/wsserver"}},
		{Name: "strict reports websocket servers", Edit: func(c *config.Config) { c.Imports.Strict = true }, Pkgs: []string{"imports/wsstrict"}},
		{Name: "a package selected by pattern", Edit: func(c *config.Config) { c.Lease.Packages = config.Patterns{"imports/pat..."} }, Pkgs: []string{"imports/patterned"}},
		{Name: "packages that are not lease packages", Pkgs: []string{"notlease", "release"}},
	})
}
