package lease_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestDirectives(t *testing.T) {
	for _, a := range analyzer.New(config.Default()) {
		if a.Name == lease.Name {
			analysistest.Run(t, testdir.Root(), a, "directives")
			return
		}
	}
	t.Fatal("no lease analyzer")
}

func TestBadSettings(t *testing.T) {
	cfg := config.Default()
	cfg.Imports.Ban = config.Patterns{"example.com/..."}
	l := analyzer.New(cfg)[0]
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
