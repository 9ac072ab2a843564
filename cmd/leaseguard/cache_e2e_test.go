//go:build e2e

package main_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestSharedCache runs leaseguard as a fleet of CI machines would, with the
// go command's cache shared through GOCACHEPROG: go-cacher on each machine,
// one go-cacher-server between them (bradfitz/go-tool-cache, built by
// scripts/go-cacher.sh). Two empty local caches play two machines, on the
// same checkout path, as CI runners have. What the first machine analysed,
// the second must report again, finding for finding and with the same exit
// status, without running leaseguard on any package; a changed setting on
// the second machine must run it again and report the new result, not
// replay the old one. The standalone command, which runs go vet, finds
// the same results.
//
// Whether leaseguard ran, and on which packages, is told by a -toolexec
// program that records each vet unit that the go command hands to the
// leaseguard binary and then runs it: a unit the cache answers is never
// started. -toolexec is not part of the go command's cache keys (a tool's
// identity is its -V=full output, which the program passes through), so
// the recording changes nothing that it records.
func TestSharedCache(t *testing.T) {
	if err := track(); err != nil {
		t.Fatal(err)
	}
	bin := goCacher(t)
	server := startCacheServer(t, bin)
	units := filepath.Join(t.TempDir(), "units")
	toolexec := unitRecorder(t, units)
	machine := func() []string {
		home := t.TempDir()
		return append(os.Environ(),
			"GOCACHE="+filepath.Join(home, "gocache"),
			"GOCACHEPROG="+filepath.Join(bin, "go-cacher")+" -cache-dir "+filepath.Join(home, "go-cacher")+" -cache-server "+server,
			"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -toolexec="+toolexec),
		)
	}
	first, second := machine(), machine()
	dir := example(t)

	// run runs cmd in dir with env, and returns its result and the
	// packages on which leaseguard ran.
	run := func(env []string, cmd ...string) (result, []string) {
		t.Helper()
		if err := os.WriteFile(units, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Dir, c.Env = dir, env
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%v: %v", cmd, err)
		}
		data, err := os.ReadFile(units)
		if err != nil {
			t.Fatal(err)
		}
		var ran []string // one line per vet unit
		for line := range strings.Lines(string(data)) {
			ran = append(ran, strings.TrimSuffix(line, "\n"))
		}
		slices.Sort(ran)
		return result{stdout.String(), stderr.String(), c.ProcessState.ExitCode()}, ran
	}
	const lease = "example.com/shop/lease"
	vet := []string{"go", "vet", "-vettool=" + binary, "./..."}

	// 1. The first machine analyses.
	r1, ran := run(first, vet...)
	if r1.code != 1 {
		t.Errorf("first machine: exit code %d, want 1\nstderr:\n%s", r1.code, r1.stderr)
	}
	if got := findings(r1.stderr, dir); !slices.Equal(got, wantExample) {
		t.Errorf("first machine: findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExample, "\n"))
	}
	if !slices.Contains(ran, lease) {
		t.Fatalf("first machine: leaseguard did not run on %s; it ran on %q", lease, ran)
	}
	t.Logf("first machine: leaseguard ran on %d packages", len(ran))

	// 2. The first machine's standalone command runs go vet -json with
	//    -lease.notes, which go vet keys apart from the run above: the
	//    lease package is analysed again.
	r1s, ran := run(first, binary, "./...")
	if r1s.code != 3 {
		t.Errorf("first machine, standalone: exit code %d, want 3\nstderr:\n%s", r1s.code, r1s.stderr)
	}
	if !slices.Contains(ran, lease) {
		t.Errorf("first machine, standalone: leaseguard did not run on %s with -lease.notes; it ran on %q", lease, ran)
	}

	// 3. The second machine's standalone command replays the first's
	//    findings from the shared cache and runs nothing.
	r2, ran := run(second, binary, "./...")
	if r2.code != 3 {
		t.Errorf("second machine, standalone: exit code %d, want 3\nstderr:\n%s", r2.code, r2.stderr)
	}
	if got, want := findings(r2.stderr, dir), findings(r1s.stderr, dir); !slices.Equal(got, want) {
		t.Errorf("second machine, standalone: findings:\n%s\nthe first machine's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(ran) > 0 {
		t.Errorf("second machine, standalone: leaseguard ran on %d packages, want none (every result from the shared cache): %q", len(ran), ran)
	}

	// 4. So does go vet there, with the first go vet's output and exit
	//    status.
	r3, ran := run(second, vet...)
	if r3.code != r1.code {
		t.Errorf("second machine: exit code %d, the first's %d", r3.code, r1.code)
	}
	if got, want := sortedLines(r3.stderr), sortedLines(r1.stderr); !slices.Equal(got, want) {
		t.Errorf("second machine's output is not the first's:\n%s\nthe first's:\n%s", r3.stderr, r1.stderr)
	}
	if len(ran) > 0 {
		t.Errorf("second machine: leaseguard ran on %d packages, want none (every result from the shared cache): %q", len(ran), ran)
	}

	// 5. A changed setting on the second machine is a miss for every
	//    package: leaseguard runs again, and the finding that the setting
	//    allows is gone.
	r, ran := run(second, "go", "vet", "-vettool="+binary, "-imports.allow=example.com/shop/explain", "./...")
	if got := findings(r.stderr, dir); !slices.Equal(got, wantExample[1:]) {
		t.Errorf("second machine, -imports.allow: findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExample[1:], "\n"))
	}
	if !slices.Contains(ran, lease) {
		t.Errorf("second machine, -imports.allow: leaseguard did not run on %s; it ran on %q", lease, ran)
	}
	t.Logf("second machine, -imports.allow: leaseguard ran on %d packages", len(ran))
}

// goCacher returns the directory that holds go-cacher and
// go-cacher-server, built by scripts/go-cacher.sh (cached under the Go
// build cache).
func goCacher(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(testdir.Root(), "..", "scripts", "go-cacher.sh")).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("building go-cacher: %v\n%s", err, exit.Stderr)
	} else if err != nil {
		t.Fatalf("building go-cacher: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// startCacheServer starts go-cacher-server from bin on a free port of
// 127.0.0.1, with an empty store, and returns its URL once it answers. It
// is stopped when t ends.
func startCacheServer(t *testing.T, bin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(filepath.Join(bin, "go-cacher-server"), "-cache-dir", t.TempDir(), "-listen", addr)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	url := "http://" + addr
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(url + "/"); err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(body) == "hi" {
				return url
			}
		}
		select {
		case <-exited:
			t.Fatalf("go-cacher-server on %s exited: %v\n%s", addr, cmd.ProcessState, log.String())
		case <-deadline:
			t.Fatalf("go-cacher-server on %s did not answer within a minute\n%s", addr, log.String())
		case <-tick.C:
		}
	}
}

// unitRecorder writes a -toolexec program that runs each tool as asked and,
// when the tool is leaseguard on a vet unit (its last argument is the
// unit's vet.cfg), first appends the unit's package to the file units.
func unitRecorder(t *testing.T, units string) string {
	t.Helper()
	prog := filepath.Join(t.TempDir(), "record-units")
	script := `#!/bin/sh
for last; do :; done
if [ "$1" = '` + binary + `' ]; then
	case $last in
	*.cfg) sed -n 's/^[[:space:]]*"ID": "\(.*\)",$/\1/p' "$last" | head -n 1 >>'` + units + `' ;;
	esac
fi
exec "$@"
`
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog
}

// sortedLines returns the lines of s, sorted: go vet prints each package's
// findings as its analysis ends, in no fixed order between packages.
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return lines
}
