//go:build e2e

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithoutCgo builds leaseguard with CGO_ENABLED=0, whose PostgreSQL
// parser is WebAssembly run by wazero (analyzer/internal/pgsql's
// parser_wazero.go), and checks that it prints what the cgo build prints on
// testdata/example, related information included: through go vet with the
// compilation cache empty (each vet unit that parses compiles the parser
// and one of them writes it to the user's cache directory), then in process
// with the cache written.
func TestWithoutCgo(t *testing.T) {
	dir := example(t)
	nocgo := filepath.Join(t.TempDir(), "leaseguard")
	// go vet keys its cache on the executable's hash (-V=full): a link flag
	// naming this run makes an executable no earlier run has vetted with,
	// so that the go vet pass below runs the parser and does not replay.
	build := exec.Command("go", "build", "-o", nocgo, "-ldflags=-X=main.run="+nocgo, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "version", "-m", nocgo).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") || !strings.Contains(string(out), "github.com/tetratelabs/wazero") {
		t.Fatalf("go version -m %s: %v, want a build with CGO_ENABLED=0 and wazero:\n%s", nocgo, err, out)
	}
	// os.UserCacheDir on Linux, which moves the go command's build cache
	// too unless GOCACHE is set: keep that one.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	for _, args := range [][]string{
		{"./..."},          // through go vet: a process per package
		{"-test", "./..."}, // in process, the compiled parser from the cache
	} {
		want := run(t, dir, binary, args...)
		got := run(t, dir, nocgo, args...)
		if got.code != want.code || got.stderr != want.stderr || got.stdout != want.stdout {
			t.Errorf("leaseguard %s without cgo: exit %d\n%s%s\nwith cgo: exit %d\n%s%s", strings.Join(args, " "),
				got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
		if len(findings(got.stderr, dir)) == 0 {
			t.Errorf("leaseguard %s without cgo: no finding on the example:\n%s", strings.Join(args, " "), got.stderr)
		}
		entries, err := os.ReadDir(filepath.Join(cache, "leaseguard", "wazero"))
		if err != nil || len(entries) == 0 {
			t.Errorf("after leaseguard %s without cgo, the compilation cache in %s is empty: %v", strings.Join(args, " "), cache, err)
		}
	}
}
