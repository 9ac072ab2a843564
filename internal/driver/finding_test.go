package driver

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// tree is go vet -json's output for two units: a package and its test
// variant, which report the same finding, one with a note and an
// explanation beside it, and an analyzer that failed.
const tree = `{
	"example.com/lease": {
		"fence": [
			{"category": "fence", "posn": "/m/lease/renew.go:23:32", "end": "/m/lease/renew.go:23:60", "message": "INSERT into orders is not fenced",
			 "related": [{"posn": "/m/lease/renew.go:23:45", "end": "/m/lease/renew.go:23:50", "message": "in this SQL"}]},
			{"category": "note", "posn": "/m/lease/lease.go:1:1", "end": "", "message": "fence checked no write here"}
		],
		"clock": [
			{"category": "clock", "posn": "/m/lease/renew.go:9:17", "end": "/m/lease/renew.go:9:27", "message": "time.Now flows into an argument of ExecContext"}
		]
	},
	"example.com/lease [example.com/lease.test]": {
		"fence": [
			{"category": "fence", "posn": "/m/lease/renew.go:23:32", "end": "/m/lease/renew.go:23:60", "message": "INSERT into orders is not fenced",
			 "related": [{"posn": "/m/lease/renew.go:23:45", "end": "/m/lease/renew.go:23:50", "message": "in this SQL"}]},
			{"category": "explain", "posn": "/m/lease/lease.go:1:1", "end": "", "message": "explain: 3 SQL calls read, 0 not"}
		],
		"imports": {"error": "analysis skipped: errors in package"}
	}
}`

func readTree(t *testing.T) map[string]map[string]json.RawMessage {
	t.Helper()
	var out map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(tree), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTreeFindings(t *testing.T) {
	fs, failed := treeFindings(readTree(t))
	var got []string
	for _, f := range fs {
		got = append(got, f.rule()+" "+f.Posn+" "+f.Message)
	}
	want := []string{
		"explain /m/lease/lease.go:1:1 explain: 3 SQL calls read, 0 not",
		"note /m/lease/lease.go:1:1 fence checked no write here",
		// Line 9 before line 23: lines compare as numbers.
		"clock /m/lease/renew.go:9:17 time.Now flows into an argument of ExecContext",
		// Once, though both variants report it.
		"fence /m/lease/renew.go:23:32 INSERT into orders is not fenced",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%q\nwant:\n%q", got, want)
	}
	if want := []string{"example.com/lease [example.com/lease.test]: imports: analysis skipped: errors in package"}; !slices.Equal(failed, want) {
		t.Errorf("failed %q, want %q", failed, want)
	}
}

func TestWriteText(t *testing.T) {
	fs, _ := treeFindings(readTree(t))
	var b bytes.Buffer
	n := writeText(&b, fs)
	want := `/m/lease/lease.go:1:1: explain: 3 SQL calls read, 0 not
/m/lease/lease.go:1:1: fence checked no write here
/m/lease/renew.go:9:17: time.Now flows into an argument of ExecContext
/m/lease/renew.go:23:32: INSERT into orders is not fenced
/m/lease/renew.go:23:45: 	in this SQL
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	// The note and the explanation are printed, not counted.
	if n != 2 {
		t.Errorf("%d findings counted, want 2", n)
	}
}

func TestBadSettings(t *testing.T) {
	msg := (&config.SettingError{Setting: "fence.table", Value: "lease.nosuch", Why: "no such field or variable"}).Error()
	fs := []finding{
		{Category: "lease", Posn: "/m/a/a.go:1:1", Message: msg},
		{Category: "lease", Posn: "/m/b/b.go:1:1", Message: msg},
		{Category: "fence", Posn: "/m/b/b.go:2:1", Message: "INSERT into orders is not fenced"},
	}
	var b bytes.Buffer
	if !badSettings(fs, &b) {
		t.Fatalf("%q not taken for a bad setting", msg)
	}
	if want := "leaseguard: " + msg + "\n"; b.String() != want {
		t.Errorf("stderr %q, want the message once: %q", b.String(), want)
	}
	if badSettings(fs[2:], &b) {
		t.Error("a finding taken for a bad setting")
	}
}

func TestSARIFResults(t *testing.T) {
	fs, _ := treeFindings(readTree(t))
	root := sarifRoot{dir: filepath.FromSlash("/m")}
	rules := map[string]int{"lease": 0, "imports": 1, "clock": 2, "fence": 3}
	results := sarifResults(root, rules, fs)
	if len(results) != len(fs) {
		t.Fatalf("%d results for %d findings", len(results), len(fs))
	}
	r := results[3]
	if r.RuleID != "fence" || r.RuleIndex != 3 || r.Level != "error" || r.Message.Text != "INSERT into orders is not fenced" {
		t.Errorf("result %+v", r)
	}
	loc := r.Locations[0].PhysicalLocation
	if loc.ArtifactLocation.URI != "lease/renew.go" || loc.ArtifactLocation.URIBaseID != srcRoot ||
		loc.Region != (sarifRegion{StartLine: 23, StartColumn: 32, EndLine: 23, EndColumn: 60}) {
		t.Errorf("location %+v", loc)
	}
	if len(r.RelatedLocations) != 1 || r.RelatedLocations[0].ID != 1 || r.RelatedLocations[0].Message.Text != "in this SQL" ||
		r.RelatedLocations[0].PhysicalLocation.Region.StartColumn != 45 {
		t.Errorf("related %+v", r.RelatedLocations)
	}
	// No end: the range is the position.
	if reg := results[1].Locations[0].PhysicalLocation.Region; reg != (sarifRegion{1, 1, 1, 1}) {
		t.Errorf("region without an end %+v", reg)
	}
}
