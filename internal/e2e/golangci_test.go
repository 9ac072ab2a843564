//go:build e2e

package e2e_test

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// customGCL returns the golangci-lint binary built with the plugin, by
// scripts/golangci.sh (cached under the Go build cache).
var customGCL = sync.OnceValues(func() (string, error) {
	out, err := exec.Command(filepath.Join(testdir.Root(), "..", "scripts", "golangci.sh")).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", errors.New(string(exit.Stderr))
	}
	return strings.TrimSpace(string(out)), err
})

func gcl(t *testing.T, config string) (string, int) {
	t.Helper()
	bin, err := customGCL()
	if err != nil {
		t.Fatalf("building golangci-lint with the plugin: %v", err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--output.text.path", "stdout", "--show-stats=false", "./...")
	cmd.Dir = filepath.Join(testdir.Root(), "golangci")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func TestGolangciLint(t *testing.T) {
	const (
		direct = "lease/lease.go:7:2: imports: lease package imports HTTP client net/http and uses http.DefaultClient: a network call in the write path can veto leadership (leaseguard)"
		strict = "lease/lease.go:9:2: imports: lease package imports HTTP client net/http via example.com/gcl/metrics: a network call in the write path can veto leadership (leaseguard)"
		nolint = "lease/silenced.go"
	)
	for _, tc := range []struct {
		name, config string
		want, not    []string
		code         int
	}{
		{"settings from .golangci.yml turn on strict", ".golangci.yml", []string{direct, strict}, []string{nolint}, 1},
		{"default settings", ".golangci-default.yml", []string{direct}, []string{strict, nolint}, 1},
		{"a misspelled setting fails clearly", ".golangci-bad.yml", []string{`leaseguard settings: decoding settings: json: unknown field "stirct"`}, []string{direct}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := gcl(t, tc.config)
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q", n)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
