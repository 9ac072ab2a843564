package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/internal/version"
)

// The findings on testdata/example, the README's example module: a direct
// chain to a model SDK, a two-package chain to a package that uses the HTTP
// client (which go vet sees only through facts of direct imports). metrics
// uses net/http only as a server and is not reported, and neither is the
// test file's HTTP client by default.
// Then the process clock in a write's argument, and in the branch before one;
// and the SQL of the same writes: a renewal whose expiry the process sets and
// never tests, whose result is dropped, and an insert that carries the epoch
// with no fence.
var wantExample = []string{
	"lease/lease.go:10:2: lease package imports model SDK github.com/openai/openai-go/v3 via example.com/shop/explain: a vendor in the write path can veto leadership",
	"lease/lease.go:12:2: lease package imports HTTP client net/http via example.com/shop/notify -> example.com/shop/webhook (example.com/shop/webhook uses http.Client.Do): a network call in the write path can veto leadership",
	"lease/renew.go:12:3: UPDATE of worker_leases sets expires_at from $3, a time the process chose: compute it from clock_timestamp()",
	"lease/renew.go:12:3: renewal does not test expires_at > clock_timestamp(): it revives a lease that has expired",
	"lease/renew.go:12:3: the result of this renewal is discarded: a renewal or takeover that matches no row returns no error, so the holder never learns it lost the lease; compare RowsAffected",
	"lease/renew.go:13:17: time.Now flows into an argument of ExecContext: the database clock must decide, not the process clock",
	"lease/renew.go:20:5: time.Now decides whether ExecContext runs: the database clock must decide, not the process clock",
	"lease/renew.go:23:32: INSERT into orders is not fenced: no EXISTS or join on worker_leases tests holder, epoch and expiry, so a stale holder's write lands",
}

var binary string // the leaseguard binary that TestMain builds

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "leaseguard-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "leaseguard")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// track tells go test's cache that the tests' results depend on the whole
// repository (see testdir.Track). It must run in a test: go test records
// the files a test binary reads only from the first test on.
var track = sync.OnceValue(testdir.Track)

// run runs name with args in dir and returns its output and exit code.
func run(t *testing.T, dir, name string, args ...string) result {
	t.Helper()
	if err := track(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

var diagLine = regexp.MustCompile(`^(?:\./)?[^\s:]+\.go:\d+:\d+: `)

// findings returns the diagnostic lines of output, with paths made relative
// to dir, sorted. Related information (a position, then a tab) is left out.
func findings(output, dir string) []string {
	var out []string
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(strings.TrimPrefix(line, dir+string(filepath.Separator)))
		if m := diagLine.FindStringIndex(line); m != nil && !strings.HasPrefix(line[m[1]:], "\t") {
			out = append(out, strings.TrimPrefix(line, "./"))
		}
	}
	slices.Sort(out)
	return out
}

func example(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "example"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDrivers(t *testing.T) {
	dir := example(t)
	for _, tc := range []struct {
		name     string
		cmd      []string
		wantCode int
	}{
		{"standalone", []string{binary, "./..."}, 3},
		{"standalone with -C", []string{binary, "-C", dir, "./..."}, 3},
		// A flag that only the in-process checker has keeps the run in
		// process, not through go vet: the same findings.
		{"standalone in process", []string{binary, "-test", "./..."}, 3},
		{"standalone in process without tests", []string{binary, "-test=false", "./..."}, 3},
		{"standalone in process, -diff without -fix", []string{binary, "-diff", "./..."}, 3},
		{"go vet -vettool", []string{"go", "vet", "-vettool=" + binary, "./..."}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, dir, tc.cmd[0], tc.cmd[1:]...)
			if r.code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", r.code, tc.wantCode, r.stderr)
			}
			if got := findings(r.stderr, dir); !slices.Equal(got, wantExample) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExample, "\n"))
			}
		})
	}
}

func TestFlagsReachTheRules(t *testing.T) {
	dir := example(t)
	const testFile = "lease/lease_test.go:4:2: lease package imports HTTP client net/http/httptest and uses http.Client.Get: a network call in the write path can veto leadership"
	for _, tc := range []struct {
		flag string
		want []string
	}{
		{"-imports.allow=example.com/shop/explain", wantExample[1:]}, // the chain through explain
		{"-imports.tests", slices.Insert(slices.Clone(wantExample), 2, testFile)},
	} {
		for _, cmd := range [][]string{
			{binary, tc.flag, "./..."},
			{"go", "vet", "-vettool=" + binary, tc.flag, "./..."},
		} {
			r := run(t, dir, cmd[0], cmd[1:]...)
			if got := findings(r.stderr, dir); !slices.Equal(got, tc.want) {
				t.Errorf("%v: findings %q, want %q", cmd, got, tc.want)
			}
		}
	}
}

func TestJSON(t *testing.T) {
	for _, args := range [][]string{{"-json", "./..."}, {"-json", "-test=false", "./..."}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { testJSON(t, args) })
	}
}

func testJSON(t *testing.T, args []string) {
	dir := example(t)
	r := run(t, dir, binary, args...)
	if r.code != 0 {
		t.Fatalf("-json exit code %d, want 0\n%s", r.code, r.stderr)
	}
	// package -> analyzer -> diagnostics
	var tree map[string]map[string][]struct {
		Category string `json:"category"`
		Posn     string `json:"posn"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
		t.Fatalf("-json output does not parse: %v\n%s", err, r.stdout)
	}
	// A package and its test variant both report the non-test files' findings.
	distinct := make(map[string]bool)
	for pkg, byAnalyzer := range tree {
		for analyzer, diags := range byAnalyzer {
			for _, d := range diags {
				distinct[d.Posn+d.Message] = true
				if d.Category != analyzer {
					t.Errorf("%s: %s diagnostic has category %q", pkg, analyzer, d.Category)
				}
			}
		}
	}
	if len(distinct) != len(wantExample) {
		t.Errorf("%d distinct diagnostics in JSON, want %d", len(distinct), len(wantExample))
	}
}

// TestContext runs -c, which prints the lines of each finding and of its
// related positions with that many lines around them.
func TestContext(t *testing.T) {
	dir := example(t)
	r := run(t, dir, binary, "-c", "1", "-test=false", "./...")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	got := strings.ReplaceAll(r.stderr, dir+string(filepath.Separator), "")
	for _, want := range []string{
		wantExample[0] + "\n9\t\n10\t\t\"example.com/shop/explain\"\n11\t\t\"example.com/shop/metrics\"\n",
		"lease/renew.go:11:12: \tthe SQL call\n10\tfunc Renew(",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("-c 1: no %q in\n%s", want, got)
		}
	}
}

// TestFix runs -fix on a copy of testdata/fix, whose lease package has two
// fences without a row lock, each reported by the package and its test
// variant with the same fix: -fix -diff prints the diff of what -fix
// writes and writes nothing, -diff alone prints the findings, and -fix
// writes lease.go.golden, after which there is nothing to report.
func TestFix(t *testing.T) {
	src := filepath.Join(testdir.Root(), "fix")
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "lease/lease.go", "lease/lease_test.go"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "lease", "lease.go")
	before, _ := os.ReadFile(file)
	golden, err := os.ReadFile(filepath.Join(src, "lease", "lease.go.golden"))
	if err != nil {
		t.Fatal(err)
	}

	r := run(t, dir, binary, "-fix", "-diff", "./...")
	header := "--- " + file + " (old)\n+++ " + file + " (new)\n@@ -14,7 +14,7 @@\n"
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, header) || strings.Count(r.stdout, " FOR SHARE)") != 2 || strings.Count(r.stdout, "\n+") != 3 {
		t.Errorf("-fix -diff: exit %d, want 0, a diff that adds FOR SHARE twice and nothing on stderr\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, before) {
		t.Fatalf("-fix -diff changed %s", file)
	}
	r = run(t, dir, binary, "-diff", "./...")
	if got := findings(r.stderr, dir); r.code != 3 || len(got) != 2 || r.stdout != "" {
		t.Errorf("-diff without -fix: exit %d, findings %q; want 3 and the two unlocked fences", r.code, got)
	}

	r = run(t, dir, binary, "-fix", "./...")
	if r.code != 0 || r.stdout+r.stderr != "" {
		t.Errorf("-fix: exit %d, want 0 and no output\n%s%s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, golden) {
		t.Errorf("-fix wrote:\n%s\nwant lease.go.golden:\n%s", now, golden)
	}
	if r := run(t, dir, binary, "./..."); r.code != 0 || r.stderr != "" {
		t.Errorf("after -fix: exit %d, want 0 and nothing to report\n%s", r.code, r.stderr)
	}
}

func TestCleanRepository(t *testing.T) {
	r := run(t, filepath.Join(testdir.Root(), ".."), binary, "./...")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("leaseguard ./... on this repository: exit %d\n%s", r.code, r.stderr)
	}
}

func TestErrors(t *testing.T) {
	dir := example(t)
	for _, tc := range []struct {
		name     string
		dir      string
		args     []string
		wantCode int
		want     string // in stderr
	}{
		{"bad flag value", dir, []string{"-imports.ban=a b", "./..."}, 2, `invalid value "a b" for flag -imports.ban`},
		{"unknown flag", dir, []string{"-imports.bogus", "./..."}, 2, "flag provided but not defined: -imports.bogus"},
		{"pattern that matches nothing", dir, []string{"example.com/shop/nothing"}, 1, "example.com/shop/nothing"},
		{"package that does not compile", filepath.Join(testdir.Root(), "broken"), []string{"./..."}, 1, `cannot use "not an int"`},
		{"missing -C directory", dir, []string{"-C", "no/such/dir", "./..."}, 2, "-C: chdir no/such/dir"},
		{"unknown format", dir, []string{"-format", "xml", "./..."}, 2, `-format "xml": the only format is sarif`},
		{"sarif with a bad flag", dir, []string{"-format=sarif", "-imports.ban=a b", "./..."}, 2, `invalid value "a b" for flag -imports.ban`},
		{"sarif with -json", dir, []string{"-format", "sarif", "-json", "./..."}, 2, "leaseguard: -format sarif and -json do not go together"},
		{"sarif with -fix", dir, []string{"-fix", "-format=sarif", "./..."}, 2, "leaseguard: -format sarif and -fix do not go together"},
		{"sarif on a package that does not compile", filepath.Join(testdir.Root(), "broken"), []string{"-format=sarif", "./..."}, 1, `cannot use "not an int"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.dir, binary, tc.args...)
			if r.code != tc.wantCode || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want %d; stderr:\n%s\nwant it to contain %q", r.code, tc.wantCode, r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "panic:") {
				t.Fatalf("panicked:\n%s", r.stderr)
			}
		})
	}
}

// badSettings are a bad value for every setting that takes one.
var badSettings = []struct{ flag, value string }{
	{"lease.packages", "./rel"},
	{"imports.ban", "example.com/sdk/..."},
	{"imports.allow", "a b"},
	{"clock.funcs", "nodot"},
	{"clock.funcs", "not a func name"},
	{"fence.table", "orders; drop"},
	{"fence.tables", "a.b.c"},
	{"fence.holder-column", "owner id"},
	{"fence.epoch-column", "term-id"},
	{"fence.expiry-column", "1st"},
}

// TestBadSettings feeds each setting a bad value: exit 2 before any
// analysis, with one line that names the flag and the value.
func TestBadSettings(t *testing.T) {
	dir := example(t)
	for _, bad := range badSettings {
		t.Run(bad.flag+"="+bad.value, func(t *testing.T) {
			for _, args := range [][]string{
				{"-" + bad.flag + "=" + bad.value, "./..."},
				{"-format=sarif", "-" + bad.flag, bad.value, "./..."},
			} {
				r := run(t, dir, binary, args...)
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "-"+bad.flag) || !strings.Contains(lines[0], bad.value) {
					t.Errorf("leaseguard %q: exit %d, want 2 and one line naming -%s and %q; stderr:\n%s", args, r.code, bad.flag, bad.value, r.stderr)
				}
			}
		})
	}
}

// TestVetProtocol checks what go vet asks of a vet tool: -V=full, whose
// answer go vet reads as "NAME version devel … buildID=ID" and keys its
// cache on ID (leaseguard's version and parser in between, for people),
// and -flags.
func TestVetProtocol(t *testing.T) {
	r := run(t, ".", binary, "-V=full")
	f := strings.Fields(r.stdout)
	if r.code != 0 || len(f) < 5 || f[0] != binary || f[1] != "version" || f[2] != "devel" || f[3] != version.Version ||
		!slices.Contains(f, "parser="+analyzer.Parser) || !strings.HasPrefix(f[len(f)-1], "buildID=") {
		t.Fatalf("-V=full: exit %d, %q; want \"%s version devel %s … parser=%s buildID=…\"", r.code, r.stdout, binary, version.Version, analyzer.Parser)
	}
	for _, args := range [][]string{{"-C", ".", "-V=full"}, {"-json", "-V=full"}} {
		if again := run(t, ".", binary, args...); again.code != 0 || again.stdout != r.stdout {
			t.Errorf("%s: exit %d, %q; want %q", strings.Join(args, " "), again.code, again.stdout, r.stdout)
		}
	}
	r = run(t, ".", binary, "-flags")
	var flags []struct{ Name string }
	if err := json.Unmarshal([]byte(r.stdout), &flags); err != nil {
		t.Fatalf("-flags: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Name)
	}
	for _, want := range []string{"lease.packages", "imports.ban", "imports.allow", "imports.strict", "imports.tests"} {
		if !slices.Contains(names, want) {
			t.Errorf("-flags lacks %s: %v", want, names)
		}
	}
}

// TestGoTool installs leaseguard as a Go tool dependency of a fresh module,
// as the README shows, from this checkout and the module cache alone.
func TestGoTool(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join(testdir.Root(), ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The checksums that this checkout has verified, so that no checksum
	// database is asked for them.
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	for _, args := range [][]string{
		{"mod", "init", "example.com/user"},
		{"mod", "edit", "-replace=github.com/leaseguard/leaseguard=" + repo},
		{"get", "-tool", "github.com/leaseguard/leaseguard/cmd/leaseguard@v0.0.0"},
		{"tool", "leaseguard", "-V=full"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestREADMEExample checks that the README's example output is what the
// binary prints on testdata/example, line for line (related information
// included), with the module's directory written as /…/testdata/example.
func TestREADMEExample(t *testing.T) {
	dir := example(t)
	readme, err := os.ReadFile(filepath.Join(testdir.Root(), "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start = "```text\n/…/testdata/example/"
	i := bytes.Index(readme, []byte(start))
	if i < 0 {
		t.Fatalf("README.md has no example output block starting %q", start)
	}
	block, _, found := bytes.Cut(readme[i+len("```text\n"):], []byte("```"))
	if !found {
		t.Fatal("README.md's example output block is not closed")
	}
	want := strings.TrimSuffix(string(block), "exit status 3\n")

	r := run(t, dir, binary, "./...")
	if r.code != 3 {
		t.Fatalf("exit code %d, want 3\n%s", r.code, r.stderr)
	}
	got := strings.ReplaceAll(r.stderr, dir+string(filepath.Separator), "/…/testdata/example/")
	if got != want {
		t.Errorf("README.md's example output differs from the binary's.\nREADME:\n%s\nbinary:\n%s", want, got)
	}
}

// TestExplain runs -explain on testdata/explain, a lease package with no
// finding: a lease table known only from what its SQL does, a table named
// at run time, and a call whose SQL comes from its caller. What the rules
// understood is printed, as text and as JSON, and is not a finding.
func TestExplain(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "explain"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lease/lease.go:42:29: explain: the lease table job_locks (inferred from its statements): holder: `locked_by`, epoch: none, expiry: `lease_expires_at`",
		"lease/lease.go:47:29: \tholder: tests locked_by = a parameter",
		"lease/lease.go:42:29: \texpiry: sets lease_expires_at from the database clock plus an interval",
		"lease/lease.go:5:1: explain: 2 SQL calls read, 2 not",
		"lease/lease.go:52:28: explain: SQL call not read: a part built at run time leaves it unparsable",
		"lease/lease.go:58:28: explain: SQL call not read: its text is the parameter query of (*Locks).Exec, which its callers choose, and the package never calls (*Locks).Exec directly",
		"lease/lease.go:70:20: explain: the methods of lease.History that may send a statement are taken for SQL calls: its method Record returns sql.Result, a database's answer",
	}
	r := run(t, dir, binary, "-explain", "./...")
	if r.code != 0 {
		t.Errorf("exit code %d, want 0: notes are not findings\n%s", r.code, r.stderr)
	}
	got := strings.ReplaceAll(r.stderr, dir+string(filepath.Separator), "")
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("-explain: no line %q in\n%s", w, got)
		}
	}

	r = run(t, dir, binary, "-explain", "-json", "./...")
	if r.code != 0 {
		t.Fatalf("-explain -json: exit code %d\n%s", r.code, r.stderr)
	}
	var tree map[string]map[string][]struct {
		Category, Posn, Message string
	}
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
		t.Fatalf("-explain -json: %v\n%s", err, r.stdout)
	}
	var notes []string
	for _, rule := range []string{"fence", "clock"} {
		for _, d := range tree["example.com/jobs/lease"][rule] {
			if d.Category != "explain" {
				t.Errorf("-explain -json: a finding on a package with none: %+v", d)
			}
			notes = append(notes, strings.TrimPrefix(d.Posn, dir+string(filepath.Separator))+": "+d.Message)
		}
	}
	for _, w := range want {
		if !strings.HasPrefix(w, "lease/lease.go:") || strings.Contains(w, "\t") {
			continue // related information is nested in JSON
		}
		if !slices.Contains(notes, w) {
			t.Errorf("-explain -json: no note %q in %q", w, notes)
		}
	}
}

// TestGoNameAim names in -fence.tables a Go field that does not exist, in
// testdata/aim, where only the field that does exist makes an unfenced
// insert a finding: every driver fails, each saying which setting and
// value and what is missing. The standalone command, through go vet or in
// process, stops with exit 2 and one line, as for a bad flag; go vet
// fails on every run, a second one from its cache included.
func TestGoNameAim(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "aim"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		good = "-fence.tables=example.com/aim/store.Store.orders"
		bad  = "-fence.tables=example.com/aim/store.Store.ordrs"
		msg  = `-fence.tables "example.com/aim/store.Store.ordrs": example.com/aim/store.Store has no field ordrs; want pkg/path.Type.Field or pkg/path.Var`
	)
	r := run(t, dir, binary, good, "./...")
	if got := findings(r.stderr, dir); r.code != 3 || len(got) != 1 || !strings.Contains(got[0], "INSERT into the table named by s.orders is not fenced") {
		t.Fatalf("%s: exit %d, want 3 and the unfenced insert:\n%s", good, r.code, r.stderr)
	}
	for _, args := range [][]string{
		{bad, "./..."},
		{"-json", bad, "./..."},
		{"-format=sarif", bad, "./..."},
		{"-format=sarif", "-test=false", bad, "./..."},
		{"-test=false", bad, "./..."},
		{"-fix", bad, "./..."},
		{"-fence.table=example.com/aim/store.Table", "./..."},
	} {
		r := run(t, dir, binary, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		want := msg
		if args[0] == "-fence.table=example.com/aim/store.Table" {
			want = `-fence.table "example.com/aim/store.Table": example.com/aim/store has no package variable Table`
		}
		if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "leaseguard: "+want) || r.stdout != "" {
			t.Errorf("leaseguard %q: exit %d, want 2, no output and one line %q; stdout %q, stderr:\n%s", args, r.code, want, r.stdout, r.stderr)
		}
	}
	for _, cmd := range [][]string{
		{"go", "vet", "-vettool=" + binary, bad, "./..."},
		{"go", "vet", "-vettool=" + binary, bad, "./..."}, // from go vet's cache
	} {
		r := run(t, dir, cmd[0], cmd[1:]...)
		if r.code == 0 || !strings.Contains(r.stderr, "store/store.go:8:9: "+msg) {
			t.Errorf("%q: exit %d, want non-zero and %q at the package clause; stderr:\n%s", cmd, r.code, msg, r.stderr)
		}
	}
}

// TestUncheckedNote runs leaseguard on testdata/explain, whose queue
// package sends SQL in which no lease table shows: the standalone command
// says that the fence rule checked no write there and exits 0, and go vet
// with -lease.notes makes the note a failure.
func TestUncheckedNote(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(testdir.Root(), "explain"))
	if err != nil {
		t.Fatal(err)
	}
	const note = "queue/queue.go:5:1: fence checked no write here: no lease table found (name it with -fence.table)"
	r := run(t, dir, binary, "./...")
	if got := strings.ReplaceAll(r.stderr, dir+string(filepath.Separator), ""); r.code != 0 || got != note+"\n" {
		t.Errorf("leaseguard ./...: exit %d, output\n%s\nwant exit 0 and only\n%s", r.code, got, note)
	}
	r = run(t, dir, "go", "vet", "-vettool="+binary, "-lease.notes", "./...")
	if r.code == 0 || !strings.Contains(r.stderr, note) {
		t.Errorf("go vet -lease.notes: exit %d, want non-zero and %q in\n%s", r.code, note, r.stderr)
	}
	r = run(t, dir, "go", "vet", "-vettool="+binary, "./...")
	if r.code != 0 {
		t.Errorf("go vet without -lease.notes: exit %d, want 0\n%s", r.code, r.stderr)
	}
}

// TestVetBadFlagOnce gives go vet a bad setting: every vet unit (each
// package, the standard library's included) is leaseguard in a process of
// its own, and the message is printed once for the run, not once per
// package, on every run (nothing is cached).
func TestVetBadFlagOnce(t *testing.T) {
	dir := example(t)
	const msg = `invalid value "orders; drop" for flag -fence.table`
	for _, args := range [][]string{
		{"vet", "-vettool=" + binary, "-fence.table=orders; drop", "./..."},
		{"vet", "-vettool=" + binary, "-fence.table=orders; drop", "./..."}, // again: not from the cache
		{"vet", "-json", "-vettool=" + binary, "-fence.table=orders; drop", "./lease"},
	} {
		r := run(t, dir, "go", args...)
		if n := strings.Count(r.stderr, msg); r.code == 0 || n != 1 {
			t.Errorf("go %q: exit %d and the message %d times, want a failure and the message once; stderr:\n%s", args, r.code, n, r.stderr)
		}
	}
}

// TestHelp checks that leaseguard help lists the rules, each with its
// title, and every setting of the settings table, with its golangci-lint
// key, and that help on one rule gives that rule's reference.
func TestHelp(t *testing.T) {
	r := run(t, ".", binary, "help")
	if r.code != 0 {
		t.Fatalf("help: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	for _, a := range analyzer.New(config.Default()) {
		title, _, _ := strings.Cut(a.Doc, "\n")
		if !strings.Contains(out, a.Name) || !strings.Contains(out, title) {
			t.Errorf("help lacks the rule %s: %s", a.Name, title)
		}
	}
	for _, s := range config.Settings() {
		if flag := "-" + s.Rule + "." + s.Key; !strings.Contains(out, flag) {
			t.Errorf("help lacks the setting %s", flag)
		}
	}
	if strings.Contains(out, "Printf") {
		t.Errorf("help speaks of Printf:\n%s", out)
	}
	if t.Failed() {
		t.Logf("help:\n%s", out)
	}
	r = run(t, ".", binary, "help", "fence")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "-fence.epoch-column") {
		t.Errorf("help fence: exit %d, want 0 and the fence rule's flags\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestChdir gives -C anywhere among the flags, before the packages, as
// -C dir and -C=dir: the run is in dir's module.
func TestChdir(t *testing.T) {
	dir := example(t)
	for _, args := range [][]string{
		{"-C", dir, "./..."},
		{"-imports.strict=false", "-C", dir, "./..."},
		{"-test", "-C=" + dir, "./..."},
		{"-json", "-C", dir, "./..."},
	} {
		r := run(t, testdir.Root(), binary, args...)
		n, wantCode := len(findings(r.stderr, dir)), 3
		if args[0] == "-json" {
			var tree map[string]map[string][]struct{ Posn, Message string }
			_ = json.Unmarshal([]byte(r.stdout), &tree)
			distinct := make(map[string]bool)
			for _, byAnalyzer := range tree {
				for _, diags := range byAnalyzer {
					for _, d := range diags {
						distinct[d.Posn+d.Message] = true
					}
				}
			}
			n, wantCode = len(distinct), 0
		}
		if r.code != wantCode || n != len(wantExample) {
			t.Errorf("leaseguard %q: exit %d, %d findings; want %d and the %d of testdata/example\nstdout:\n%s\nstderr:\n%s", args, r.code, n, wantCode, len(wantExample), r.stdout, r.stderr)
		}
	}
}

// TestMissingPackage names packages that do not exist: the command says
// so, as the go command does, and nothing about its analyzers.
func TestMissingPackage(t *testing.T) {
	dir := example(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"./nosuch"}, "nosuch: directory not found"},
		{[]string{"-json", "./nosuch"}, "nosuch: directory not found"},
		{[]string{"./lease", "example.com/nosuch/pkg"}, "no required module provides package example.com/nosuch/pkg"},
		{[]string{"-test", "./nosuch"}, "nosuch: directory not found"},
	} {
		r := run(t, dir, binary, tc.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("leaseguard %q: exit %d, want 1 and %q; stderr:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
		for _, noise := range []string{"failed prerequisites", "analysis skipped", "noreturn", "lazyssa"} {
			if strings.Contains(r.stdout+r.stderr, noise) {
				t.Errorf("leaseguard %q: the output speaks of %q:\nstdout:\n%s\nstderr:\n%s", tc.args, noise, r.stdout, r.stderr)
				break
			}
		}
	}
}
