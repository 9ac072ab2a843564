package main_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestSARIF checks -format sarif against the SARIF 2.1.0 JSON schema kept in
// testdata: one run, a rule per analyzer with its help URL, and every
// finding at a location relative to the repository's root (this one's, or
// the module's where the tree has no .git), which originalUriBaseIds
// names.
func TestSARIF(t *testing.T) {
	dir := example(t)
	r := run(t, dir, binary, "-format", "sarif", "./...")
	if r.code != 0 {
		t.Fatalf("-format sarif: exit %d\n%s", r.code, r.stderr)
	}
	schemaFile, err := os.Open(filepath.Join(testdir.Root(), "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer schemaFile.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-schema-2.1.0.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("output does not validate against the SARIF 2.1.0 schema: %v", err)
	}

	var log struct {
		Version string
		Runs    []struct {
			OriginalURIBaseIDs map[string]struct{ URI string }
			Tool               struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID               string
						ShortDescription struct{ Text string }
						HelpURI          string
					}
				}
			}
			Results []struct {
				RuleID           string
				Message          struct{ Text string }
				Locations        []sarifLocation
				RelatedLocations []sarifLocation
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "leaseguard" {
		t.Fatalf("want one leaseguard run of SARIF 2.1.0, got version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	// The example module's directory from the root, as URIs begin.
	base, err := url.Parse(run.OriginalURIBaseIDs["%SRCROOT%"].URI)
	if err != nil || base.Scheme != "file" || !strings.HasSuffix(base.Path, "/") {
		t.Fatalf("originalUriBaseIds: %%SRCROOT%% is %q, want a file URI of a directory: %v", run.OriginalURIBaseIDs["%SRCROOT%"].URI, err)
	}
	prefix, err := filepath.Rel(filepath.FromSlash(base.Path), dir)
	if err != nil || !filepath.IsLocal(prefix) && prefix != "." {
		t.Fatalf("the example %s is not under %%SRCROOT%% %s", dir, base.Path)
	}
	prefix = strings.TrimPrefix(filepath.ToSlash(prefix)+"/", "./")
	rules := map[string]bool{}
	for _, rule := range run.Tool.Driver.Rules {
		if rule.ShortDescription.Text == "" || !strings.HasPrefix(rule.HelpURI, "https://github.com/leaseguard/leaseguard/blob/main/") {
			t.Errorf("rule %+v lacks a description or help URL", rule)
		}
		rules[rule.ID] = true
	}
	for _, want := range []string{"lease", "imports", "clock"} {
		if !rules[want] {
			t.Errorf("no rule entry for %s", want)
		}
	}
	var got, related []string
	for _, res := range run.Results {
		if !rules[res.RuleID] {
			t.Errorf("result for undeclared rule %q", res.RuleID)
		}
		for _, l := range append(res.Locations, res.RelatedLocations...) {
			if a := l.PhysicalLocation.ArtifactLocation; a.URIBaseID != "%SRCROOT%" || !strings.HasPrefix(a.URI, prefix) {
				t.Errorf("%s: location %+v is not under %s from %%SRCROOT%%", res.Message.Text, a, prefix)
			}
		}
		loc := strings.TrimPrefix(res.Locations[0].String(), prefix)
		got = append(got, loc+": "+res.Message.Text)
		for i, rel := range res.RelatedLocations {
			if rel.ID != i+1 {
				t.Errorf("%s: related location %d has id %d", res.Locations[0], i, rel.ID)
			}
			related = append(related, loc+" -> "+strings.TrimPrefix(rel.String(), prefix)+": "+rel.Message.Text)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, wantExample) {
		t.Errorf("SARIF results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExample, "\n"))
	}
	// The related information that the text output shows, one line each
	// after its finding: where in the SQL each problem is, and which SQL
	// call a clock reaches or decides.
	wantRelated := []string{
		"lease/renew.go:12:3 -> lease/renew.go:12:11: in this SQL",
		"lease/renew.go:12:3 -> lease/renew.go:12:29: in this SQL",
		"lease/renew.go:13:17 -> lease/renew.go:11:12: the SQL call",
		"lease/renew.go:20:5 -> lease/renew.go:23:12: the SQL call",
		"lease/renew.go:23:32 -> lease/renew.go:23:45: in this SQL",
	}
	slices.Sort(related)
	if !slices.Equal(related, wantRelated) {
		t.Errorf("SARIF related locations:\n%s\nwant:\n%s", strings.Join(related, "\n"), strings.Join(wantRelated, "\n"))
	}
}

type sarifLocation struct {
	ID               int
	Message          struct{ Text string }
	PhysicalLocation struct {
		ArtifactLocation struct{ URI, URIBaseID string }
		Region           struct{ StartLine, StartColumn int }
	}
}

func (l sarifLocation) String() string {
	p := l.PhysicalLocation
	return fmt.Sprintf("%s:%d:%d", p.ArtifactLocation.URI, p.Region.StartLine, p.Region.StartColumn)
}

// TestSARIFFlags checks that a rule's flag reaches the rule with -format
// sarif, which analyses through go vet: -imports.strict adds the import
// that reaches net/http only through another package.
func TestSARIFFlags(t *testing.T) {
	dir := example(t)
	uris := func(args ...string) []string {
		r := run(t, dir, binary, append(append([]string{"-format", "sarif"}, args...), "./...")...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, r.code, r.stderr)
		}
		var log struct {
			Runs []struct {
				Results []struct{ Locations []sarifLocation }
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || len(log.Runs) != 1 {
			t.Fatalf("%q: not one SARIF run: %v", args, err)
		}
		var out []string
		for _, res := range log.Runs[0].Results {
			out = append(out, res.Locations[0].String())
		}
		return out
	}
	// Locations are from the repository's root (see TestSARIF).
	const strictOnly = "lease/lease.go:11:2"
	at := func(uri string) bool { return uri == strictOnly || strings.HasSuffix(uri, "/"+strictOnly) }
	if got := uris(); slices.ContainsFunc(got, at) {
		t.Errorf("without -imports.strict: a finding at %s", strictOnly)
	}
	if got := uris("-imports.strict"); !slices.ContainsFunc(got, at) {
		t.Errorf("-imports.strict: no finding at %s among %q", strictOnly, got)
	}
}

// TestSARIFModuleInSubdirectory runs -format sarif on the example module
// copied into a subdirectory of a git repository, as a monorepo holds a
// module: code scanning reads locations from the repository's root, so
// they start with the module's directory, and originalUriBaseIds says that
// %SRCROOT% is the repository's root. Copied where no repository holds it,
// locations start at the module's root, and the base says so.
func TestSARIFModuleInSubdirectory(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	plain := t.TempDir()
	for _, tc := range []struct {
		name, root, module, prefix, what string
	}{
		{"in a subdirectory of a git repository", repo, filepath.Join(repo, "services", "shop"), "services/shop/", "git repository"},
		{"in no repository", plain, plain, "", "module's root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.CopyFS(tc.module, os.DirFS(example(t))); err != nil {
				t.Fatal(err)
			}
			r := run(t, tc.module, binary, "-format", "sarif", "./...")
			if r.code != 0 {
				t.Fatalf("-format sarif: exit %d\n%s", r.code, r.stderr)
			}
			var log struct {
				Runs []struct {
					OriginalURIBaseIDs map[string]struct {
						URI         string
						Description struct{ Text string }
					}
					Results []struct {
						Message          struct{ Text string }
						Locations        []sarifLocation
						RelatedLocations []sarifLocation
					}
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || len(log.Runs) != 1 {
				t.Fatalf("not one SARIF run: %v\n%s", err, r.stdout)
			}
			base := log.Runs[0].OriginalURIBaseIDs["%SRCROOT%"]
			if want := (&url.URL{Scheme: "file", Path: filepath.ToSlash(tc.root) + "/"}).String(); base.URI != want || !strings.Contains(base.Description.Text, tc.what) {
				t.Errorf("originalUriBaseIds: %%SRCROOT%% is %q (%q), want %q (the %s)", base.URI, base.Description.Text, want, tc.what)
			}
			var got []string
			for _, res := range log.Runs[0].Results {
				for _, l := range append(res.Locations, res.RelatedLocations...) {
					if a := l.PhysicalLocation.ArtifactLocation; a.URIBaseID != "%SRCROOT%" || !strings.HasPrefix(a.URI, tc.prefix+"lease/") {
						t.Errorf("%s: location %+v, want %s… from %%SRCROOT%%", res.Message.Text, a, tc.prefix+"lease/")
					}
				}
				got = append(got, strings.TrimPrefix(res.Locations[0].String(), tc.prefix)+": "+res.Message.Text)
			}
			slices.Sort(got)
			if !slices.Equal(got, wantExample) {
				t.Errorf("SARIF results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExample, "\n"))
			}
		})
	}
}

// sarifFiles returns, for a SARIF log out, the function from a location's
// URI to the file it names: resolved against the run's %SRCROOT% (its
// originalUriBaseIds), or an absolute file URI.
func sarifFiles(t *testing.T, out string) func(uri string) string {
	t.Helper()
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]struct{ URI string }
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("not one SARIF run: %v", err)
	}
	base, err := url.Parse(log.Runs[0].OriginalURIBaseIDs["%SRCROOT%"].URI)
	if err != nil {
		t.Fatal(err)
	}
	return func(uri string) string {
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatalf("location URI %q: %v", uri, err)
		}
		return filepath.FromSlash(base.ResolveReference(u).Path)
	}
}
