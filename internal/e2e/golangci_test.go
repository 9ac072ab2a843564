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
	dir := filepath.Join(testdir.Root(), "example")
	config := filepath.Join(t.TempDir(), "golangci.yml")
	// golangci-lint's defaults but for the linters enabled, and paths
	// relative to the module, not to the configuration file.
	if err := os.WriteFile(config, []byte("version: \"2\"\nrun:\n  relative-path-mode: wd\n"+leaseguardOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--output.text.path", "stdout", "--output.text.print-issued-lines=false", "--show-stats=false", "./...")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	issues := make(map[fileLine]issue)
	issueRE := regexp.MustCompile(`^(\S+):(\d+):(\d+): (.*) \(leaseguard\)$`)
	for l := range strings.Lines(string(out)) {
		if m := issueRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			addIssue(t, issues, filepath.Join(dir, m[1]), m[2], m[3], m[4])
		}
	}
	checkIssues(t, issues, standalone(t, dir, "./..."))
	if t.Failed() {
		t.Logf("golangci-lint's output:\n%s", out)
	}
}

// leaseguardOnly is the part of a .golangci.yml that enables the plugin's
// linter and no other, with golangci-lint's defaults otherwise.
const leaseguardOnly = `linters:
  default: none
  enable: [leaseguard]
  settings:
    custom:
      leaseguard:
        type: module
`

// TestEditors runs golangci-lint with the plugin as the editors'
// integrations that docs/integrations.md recommends run it, on a copy of
// testdata/example with a .golangci.yml that enables the linter, and
// reads its output as they read it: VS Code's Go extension
// (go.lintTool golangci-lint-v2, the current package, lines matched by its
// pattern) and Neovim's nvim-lint (the buffer's directory, JSON). Every
// finding of the standalone command on the lease package must be there,
// at its file, line and column, and the exit code must be 0, which the
// extension asks for.
func TestEditors(t *testing.T) {
	bin, err := customGCL()
	if err != nil {
		t.Fatalf("building golangci-lint with the plugin: %v", err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testdir.Root(), "example"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".golangci.yml"), []byte("version: \"2\"\n"+leaseguardOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(dir, "lease")
	want := standalone(t, dir, "./lease")

	t.Run("VS Code", func(t *testing.T) {
		// extension/src/diagnostics/goLint.ts: golangci-lint-v2 in the
		// package's directory, its flags appended; diagnostics.ts's
		// runTool matches each line of stdout.
		cmd := exec.Command(bin, "run", "--issues-exit-code=0", "--output.text.print-issued-lines=false", "--show-stats=false", "--output.text.path=stdout", "--path-mode=abs")
		cmd.Dir = pkg
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.Bytes())
		}
		line := regexp.MustCompile(`^([^:]*: )?((.:)?[^:]*):(\d+)(:(\d+)?)?:(?:\w+:)? (.*)$`)
		issues := make(map[fileLine]issue)
		for l := range strings.SplitSeq(stdout.String(), "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				file := m[2]
				if !filepath.IsAbs(file) {
					file = filepath.Join(pkg, file)
				}
				addIssue(t, issues, file, m[4], m[6], strings.TrimSuffix(m[7], " (leaseguard)"))
			}
		}
		checkIssues(t, issues, want)
		if t.Failed() {
			t.Logf("stdout:\n%s", stdout.Bytes())
		}
	})

	t.Run("Neovim", func(t *testing.T) {
		// lua/lint/linters/golangcilint.lua, golangci-lint v2.1 and later:
		// the buffer's directory, JSON on stdout.
		cmd := exec.Command(bin, "run", "--output.json.path=stdout", "--output.text.path=", "--output.tab.path=",
			"--output.html.path=", "--output.checkstyle.path=", "--output.code-climate.path=", "--output.junit-xml.path=",
			"--output.teamcity.path=", "--output.sarif.path=", "--issues-exit-code=0", "--show-stats=false", "--path-mode=abs", pkg)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.Bytes())
		}
		var report struct {
			Issues []struct {
				FromLinter, Text string
				Pos              struct {
					Filename     string
					Line, Column int
				}
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
			t.Fatalf("golangci-lint's JSON: %v\n%s", err, stdout.Bytes())
		}
		issues := make(map[fileLine]issue)
		for _, is := range report.Issues {
			if is.FromLinter != "leaseguard" {
				t.Errorf("an issue from %s: %s", is.FromLinter, is.Text)
			}
			addIssue(t, issues, is.Pos.Filename, strconv.Itoa(is.Pos.Line), strconv.Itoa(is.Pos.Column), is.Text)
		}
		checkIssues(t, issues, want)
		if t.Failed() {
			t.Logf("stdout:\n%s", stdout.Bytes())
		}
	})
}

// A fileLine is a line of a file, by the file's absolute path.
type fileLine struct {
	file string
	line int
}

// An issue is what golangci-lint shows on a line: the column and the text,
// without golangci-lint's "(leaseguard)".
type issue struct {
	col  int
	text string
}

// A want is a finding of the standalone command as golangci-lint's plugin
// must show it.
type want struct {
	fileLine
	col  int
	text string // rule: message (related: file:line:col; ...)
}

func addIssue(t *testing.T, issues map[fileLine]issue, file, line, col, text string) {
	t.Helper()
	n, _ := strconv.Atoi(line)
	c, _ := strconv.Atoi(col)
	k := fileLine{file, n}
	if _, dup := issues[k]; dup {
		t.Errorf("two issues on %s:%d", file, n)
	}
	issues[k] = issue{c, text}
}

// standalone runs the leaseguard command, -json, on patterns in dir, and
// returns its findings as golangci-lint must show them: the rule, the
// message and the related positions, each file relative to the finding's
// directory. Notes, off under golangci-lint by default, are left out.
func standalone(t *testing.T, dir string, patterns ...string) []want {
	t.Helper()
	lg := filepath.Join(t.TempDir(), "leaseguard")
	build := exec.Command("go", "build", "-o", lg, "./cmd/leaseguard")
	build.Dir = filepath.Join(testdir.Root(), "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	cmd := exec.Command(lg, append([]string{"-json"}, patterns...)...)
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
	split := func(p string) (file string, line, col int) {
		rest, c, _ := cutLast(p)
		file, l, _ := cutLast(rest)
		line, _ = strconv.Atoi(l)
		col, _ = strconv.Atoi(c)
		return file, line, col
	}
	var out []want
	seen := make(map[string]bool) // a package and its test variant report the same
	for _, byRule := range tree {
		for rule, ds := range byRule {
			for _, d := range ds {
				if d.Category == lease.NoteCategory || seen[d.Posn+d.Message] {
					continue
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
				out = append(out, want{fileLine{file, n}, col, text})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("leaseguard found nothing:\n%s", js)
	}
	return out
}

// checkIssues checks that each finding of want is in the issue on its
// line: the issue's own, at its column, or one that follows after "; " and
// its line and column (see plugin.byLine); and that there is no issue on a
// line without a finding.
func checkIssues(t *testing.T, issues map[fileLine]issue, want []want) {
	t.Helper()
	lines := make(map[fileLine]bool)
	for _, w := range want {
		lines[w.fileLine] = true
		is, ok := issues[w.fileLine]
		switch {
		case !ok:
			t.Errorf("%s:%d:%d: no issue on this line; leaseguard finds %s", w.file, w.line, w.col, w.text)
		case is.col == w.col && strings.HasPrefix(is.text+"; ", w.text+"; "):
		case strings.Contains(is.text+"; ", fmt.Sprintf("; %d:%d: %s; ", w.line, w.col, w.text)):
		default:
			t.Errorf("%s:%d:%d: the issue on this line lacks leaseguard's finding\n\t%s\nit says\n\t%d: %s", w.file, w.line, w.col, w.text, is.col, is.text)
		}
	}
	for k, is := range issues {
		if !lines[k] {
			t.Errorf("%s:%d:%d: an issue where leaseguard finds nothing: %s", k.file, k.line, is.col, is.text)
		}
	}
}

// cutLast cuts s at its last colon.
func cutLast(s string) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}
