//go:build e2e

package main_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestCrashHunt runs bench/crashhunt.sh on one SQL-heavy public module,
// fetched through the module proxy: go vet with every package a lease
// package, so that every rule runs on code no one here wrote. Any unit that
// dies, any facts-only unit that fails, and any panic, internal error or
// failed prerequisite in the output fails the test.
func TestCrashHunt(t *testing.T) {
	const module = "github.com/jmoiron/sqlx@v1.4.0"
	script := filepath.Join(testdir.Root(), "..", "bench", "crashhunt.sh")
	cmd := []string{script, module}
	t.Setenv("LEASEGUARD", binary)
	t.Setenv("LEASEGUARD_BENCH_DIR", t.TempDir())
	r := run(t, ".", cmd[0], cmd[1:]...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(cmd, " "), r.code, r.stdout, r.stderr)
	}
	// module units wall peak MiB findings died internal
	var units int
	for line := range strings.Lines(r.stdout) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == module {
			units, _ = strconv.Atoi(f[1])
		}
	}
	if units < 100 { // sqlx's packages and their dependencies, the standard library's included
		t.Fatalf("%d vet units, want the module and its dependencies:\n%s%s", units, r.stdout, r.stderr)
	}
	t.Logf("%s", r.stdout)
}
