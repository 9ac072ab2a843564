//go:build e2e

package e2e_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// customGCL returns the golangci-lint binary built with the plugin, by
// scripts/golangci.sh (cached under the Go build cache).
var customGCL = sync.OnceValues(func() (string, error) {
	if err := testdir.Track(); err != nil {
		return "", err
	}
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

// TestGolangciLintExample runs golangci-lint with the plugin, default
// settings, on testdata/example, and the leaseguard command on the same
// packages: the plugin must report what the command reports, finding for
// finding (golangci-lint writes the rule's name before the message).
func TestGolangciLintExample(t *testing.T) {
	bin, err := customGCL()
	if err != nil {
		t.Fatalf("building golangci-lint with the plugin: %v", err)
	}
	root := filepath.Join(testdir.Root(), "..")
	dir := filepath.Join(testdir.Root(), "example")
	config := filepath.Join(t.TempDir(), "golangci.yml")
	// Every finding shown: no caps, several on one line, generated files
	// included (the rules read the SQL in sqlc's files); paths relative to
	// the module, not to the configuration file.
	if err := os.WriteFile(config, []byte(`version: "2"
run:
  relative-path-mode: wd
linters:
  default: none
  enable: [leaseguard]
  settings:
    custom:
      leaseguard:
        type: module
  exclusions:
    generated: disable
issues:
  max-issues-per-linter: 0
  max-same-issues: 0
  uniq-by-line: false
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--output.text.path", "stdout", "--output.text.print-issued-lines=false", "--show-stats=false", "./...")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	issue := regexp.MustCompile(`^(\S+:\d+:\d+): (imports|clock|fence|lease): (.*) \(leaseguard\)$`)
	var got []string
	for line := range strings.Lines(string(out)) {
		if m := issue.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			got = append(got, m[1]+": "+m[3])
		}
	}

	lg := filepath.Join(t.TempDir(), "leaseguard")
	build := exec.Command("go", "build", "-o", lg, "./cmd/leaseguard")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	cmd = exec.Command(lg, "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	var want []string
	finding := regexp.MustCompile(`^(\S+:\d+:\d+): ([^\t].*)$`) // not a related line
	for line := range strings.Lines(stderr.String()) {
		if m := finding.FindStringSubmatch(strings.TrimSpace(strings.TrimPrefix(line, dir+string(filepath.Separator)))); m != nil {
			want = append(want, m[1]+": "+m[2])
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("golangci-lint:\n%s\nleaseguard:\n%s\ngolangci-lint's output:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
}
