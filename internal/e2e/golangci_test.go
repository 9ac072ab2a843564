//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/lease"
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
		direct = "lease/lease.go:7:2: imports: lease package imports HTTP client net/http and uses http.DefaultClient: a network call in the write path can veto leadership (uses http.DefaultClient: lease.go:13:11) (leaseguard)"
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

// TestGolangciLintExample runs golangci-lint with the plugin on
// testdata/example with golangci-lint's default settings (one issue per
// line, issues.uniq-by-line), and the leaseguard command (-json) on the
// same packages: every finding of the command must be in golangci-lint's
// output, at its position, with its rule, its message and its related
// positions (see plugin.byLine), and golangci-lint must show no other
// issue.
func TestGolangciLintExample(t *testing.T) {
	bin, err := customGCL()
	if err != nil {
		t.Fatalf("building golangci-lint with the plugin: %v", err)
	}
	root := filepath.Join(testdir.Root(), "..")
	dir := filepath.Join(testdir.Root(), "example")
	config := filepath.Join(t.TempDir(), "golangci.yml")
	// golangci-lint's defaults but for the linters enabled, and paths
	// relative to the module, not to the configuration file.
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
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--output.text.path", "stdout", "--output.text.print-issued-lines=false", "--show-stats=false", "./...")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	type line struct {
		file string
		line int
	}
	type issue struct {
		col  int
		text string
	}
	issues := make(map[line]issue)
	issueRE := regexp.MustCompile(`^(\S+):(\d+):(\d+): (.*) \(leaseguard\)$`)
	for l := range strings.Lines(string(out)) {
		m := issueRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		k := line{m[1], n}
		if _, dup := issues[k]; dup {
			t.Errorf("two issues on %s:%d", k.file, k.line)
		}
		issues[k] = issue{col, m[4]}
	}

	lg := filepath.Join(t.TempDir(), "leaseguard")
	build := exec.Command("go", "build", "-o", lg, "./cmd/leaseguard")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	cmd = exec.Command(lg, "-json", "./...")
	cmd.Dir = dir
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("leaseguard -json: %v", err)
	}
	type posn struct {
		Posn, Message string
	}
	var tree map[string]map[string][]struct {
		Category string
		posn
		Related []posn
	}
	if err := json.Unmarshal(js, &tree); err != nil {
		t.Fatalf("leaseguard -json: %v\n%s", err, js)
	}
	// Each finding as golangci-lint must show it: its position, and its
	// text, "rule: message (related: file:line:col; ...)", the related
	// files relative to the finding's directory.
	split := func(p string) (file string, line, col int) {
		rest, c, _ := cutLast(p)
		file, l, _ := cutLast(rest)
		line, _ = strconv.Atoi(l)
		col, _ = strconv.Atoi(c)
		return file, line, col
	}
	want := make(map[line]bool)
	seen := make(map[string]bool) // a package and its test variant report the same
	for _, byRule := range tree {
		for rule, ds := range byRule {
			for _, d := range ds {
				if d.Category == lease.NoteCategory || seen[d.Posn+d.Message] {
					continue // notes are off under golangci-lint by default
				}
				seen[d.Posn+d.Message] = true
				file, n, col := split(d.Posn)
				text := rule + ": " + d.Message
				if len(d.Related) > 0 {
					var rel []string
					for _, r := range d.Related {
						rfile, rline, rcol := split(r.Posn)
						name, _ := filepath.Rel(filepath.Dir(file), rfile)
						rel = append(rel, fmt.Sprintf("%s: %s:%d:%d", r.Message, filepath.ToSlash(name), rline, rcol))
					}
					text += " (" + strings.Join(rel, "; ") + ")"
				}
				name, _ := filepath.Rel(dir, file)
				k := line{filepath.ToSlash(name), n}
				want[k] = true
				is, ok := issues[k]
				switch {
				case !ok:
					t.Errorf("%s:%d:%d: no issue on this line; leaseguard finds %s", k.file, n, col, text)
				case is.col == col && strings.HasPrefix(is.text+"; ", text+"; "):
				case strings.Contains(is.text+"; ", fmt.Sprintf("; %d:%d: %s; ", n, col, text)):
				default:
					t.Errorf("%s:%d:%d: the issue on this line lacks leaseguard's finding\n\t%s\nit says\n\t%d: %s", k.file, n, col, text, is.col, is.text)
				}
			}
		}
	}
	if len(want) == 0 {
		t.Errorf("leaseguard found nothing:\n%s", js)
	}
	for k, is := range issues {
		if !want[k] {
			t.Errorf("%s:%d:%d: an issue where leaseguard finds nothing: %s", k.file, k.line, is.col, is.text)
		}
	}
	if t.Failed() {
		t.Logf("golangci-lint's output:\n%s", out)
	}
}

// cutLast cuts s at its last colon.
func cutLast(s string) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}
