package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestSARIF checks -format sarif against the SARIF 2.1.0 JSON schema kept in
// testdata: one run, a rule per analyzer with its help URL, and every
// finding at a location relative to the module root.
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
			Tool struct {
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
		got = append(got, res.Locations[0].String()+": "+res.Message.Text)
		for i, rel := range res.RelatedLocations {
			if rel.ID != i+1 {
				t.Errorf("%s: related location %d has id %d", res.Locations[0], i, rel.ID)
			}
			related = append(related, res.Locations[0].String()+" -> "+rel.String()+": "+rel.Message.Text)
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
		ArtifactLocation struct{ URI string }
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
	const strictOnly = "lease/lease.go:11:2"
	if got := uris(); slices.Contains(got, strictOnly) {
		t.Errorf("without -imports.strict: a finding at %s", strictOnly)
	}
	if got := uris("-imports.strict"); !slices.Contains(got, strictOnly) {
		t.Errorf("-imports.strict: no finding at %s among %q", strictOnly, got)
	}
}
