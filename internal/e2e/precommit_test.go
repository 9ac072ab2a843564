//go:build e2e

package e2e_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestPreCommit runs this repository's hooks with pre-commit try-repo on a
// fixture git repository, on what is staged, as a commit would: a change
// that adds a model SDK to a lease package is refused with the finding, and
// a clean change passes. The hooks build the leaseguard command and no other
// main package of this module (the examples, the benchmarks), as a go
// command first on PATH that logs its arguments shows.
func TestPreCommit(t *testing.T) {
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Fatal("pre-commit is not installed (Debian: apt-get install pre-commit)")
	}
	if err := testdir.Track(); err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs(filepath.Join(testdir.Root(), ".."))
	if err != nil {
		t.Fatal(err)
	}
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A go command first on PATH that logs its arguments, then runs go.
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	shim, goLog := t.TempDir(), filepath.Join(t.TempDir(), "go.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>" + goLog + "\nexec " + goPath + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shim, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(),
		"PATH="+shim+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"PRE_COMMIT_HOME="+home,
		// pre-commit sets GOPATH to its hook environment; keep the module
		// cache where it is, so that installing the hook downloads nothing.
		"GOMODCACHE="+strings.TrimSpace(string(modcache)),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost",
	)
	dir := t.TempDir()
	run := func(name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	must := func(name string, args ...string) {
		t.Helper()
		if out, code := run(name, args...); code != 0 {
			t.Fatalf("%s %v: exit %d\n%s", name, args, code, out)
		}
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testdir.Root(), "precommit"))); err != nil {
		t.Fatal(err)
	}
	must("git", "init", "-q")
	must("git", "add", "-A")
	must("git", "commit", "-q", "-m", "clean lease package")

	lease := filepath.Join(dir, "lease", "lease.go")
	clean, err := os.ReadFile(lease)
	if err != nil {
		t.Fatal(err)
	}
	const finding = "lease package imports model SDK github.com/openai/openai-go/v3: a vendor in the write path can veto leadership"
	dirty := strings.Replace(string(clean), `import "errors"`, `import (
	"errors"

	"github.com/openai/openai-go/v3"
)

var _ = openai.NewClient`, 1)

	for _, hook := range []string{"leaseguard", "leaseguard-vet"} {
		t.Run(hook, func(t *testing.T) {
			stage := func(src string) {
				t.Helper()
				if err := os.WriteFile(lease, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				must("git", "add", "-A")
			}

			stage(string(clean) + "\n// A clean change.\n")
			if out, code := run("pre-commit", "try-repo", repo, hook); code != 0 {
				t.Fatalf("clean change refused: exit %d\n%s", code, out)
			}

			stage(dirty)
			out, code := run("pre-commit", "try-repo", repo, hook)
			if code == 0 || !strings.Contains(out, finding) {
				t.Fatalf("change adding a model SDK: exit %d, want a refusal with %q\n%s", code, finding, out)
			}
		})
	}

	// What the hooks built, from the go commands they ran: the command
	// alone (pre-commit's golang language ran go install ./...).
	log, err := os.ReadFile(goLog)
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	for line := range strings.Lines(string(log)) {
		args := strings.Fields(line)
		if len(args) == 0 || args[0] != "build" && args[0] != "install" {
			continue
		}
		builds++
		if args[len(args)-1] != "./cmd/leaseguard" {
			t.Errorf("the hooks ran go %s; want them to build ./cmd/leaseguard alone", strings.TrimSpace(line))
		}
	}
	if builds == 0 {
		t.Errorf("the hooks built nothing that the go command logged:\n%s", log)
	}
}
