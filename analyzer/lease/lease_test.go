package lease_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/ruletest"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestDirectives(t *testing.T) {
	analysistest.Run(t, testdir.Root(), ruletest.Analyzer(t, lease.Name, nil), "directives")
}

func TestBadSettings(t *testing.T) {
	l := ruletest.Analyzer(t, lease.Name, func(c *config.Config) { c.Imports.Ban = config.Patterns{"example.com/..."} })
	res := analysistest.Run(&recorder{T: t}, testdir.Root(), l, "directives")
	if len(res) != 1 || res[0].Err == nil {
		t.Fatalf("a ban with a wildcard ran without error: %+v", res)
	}
	if got, want := res[0].Err.Error(), `imports.ban: "example.com/...": a ban is a path prefix and takes no ... wildcard`; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
}

// recorder is a testing.T that lets analysistest report the analyzer's
// error without failing the test, so that the test can check the error.
type recorder struct {
	*testing.T
}

func (r *recorder) Errorf(string, ...any) {}
