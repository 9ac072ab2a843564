package driver

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/depcheck"
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
	n := writeText(&b, fs, -1)
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

// TestWriteTextContext checks -c: each finding's and related position's
// lines, from its position to its end, with that many lines around them,
// numbered, as x/tools' checkers print them.
func TestWriteTextContext(t *testing.T) {
	file := filepath.Join(t.TempDir(), "renew.go")
	if err := os.WriteFile(file, []byte("package lease\n\nfunc a() {}\n\nfunc b() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := []finding{
		{Posn: file + ":5:1", End: file + ":6:2", Message: "b spans two lines", Related: []related{{Posn: file + ":1:1", End: file + ":1:8", Message: "the package"}}},
		{Posn: file + ":3:1", Message: "no end", Category: "note"},
	}
	for _, tc := range []struct {
		context int
		want    string
	}{
		{-1, file + ":5:1: b spans two lines\n" + file + ":1:1: \tthe package\n" + file + ":3:1: no end\n"},
		{0, file + ":5:1: b spans two lines\n5\tfunc b() {\n6\t}\n" +
			file + ":1:1: \tthe package\n1\tpackage lease\n" +
			file + ":3:1: no end\n3\tfunc a() {}\n"},
		// The file ends in a newline: its last line is empty.
		{1, file + ":5:1: b spans two lines\n4\t\n5\tfunc b() {\n6\t}\n7\t\n" +
			file + ":1:1: \tthe package\n1\tpackage lease\n2\t\n" +
			file + ":3:1: no end\n2\t\n3\tfunc a() {}\n4\t\n"},
	} {
		var b bytes.Buffer
		if n := writeText(&b, fs, tc.context); n != 1 {
			t.Errorf("-c %d: %d findings counted, want 1 (a note is not one)", tc.context, n)
		}
		if b.String() != tc.want {
			t.Errorf("-c %d:\n%s\nwant:\n%s", tc.context, b.String(), tc.want)
		}
	}
}

// TestRootFindings checks the findings of a run in process: rule by rule
// in the order of the rules, root by root, each once (a package and its
// test variant report the same), none of an analyzer that the rules only
// require, and each as go vet -json prints it, fixes included; and that
// a fix whose edit ends before it starts is an error.
func TestRootFindings(t *testing.T) {
	dir := t.TempDir()
	src := "package lease\n\nconst q = `SELECT 1 FROM worker_leases`\n"
	name := filepath.Join(dir, "lease.go")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, name, src, 0); err != nil {
		t.Fatal(err)
	}
	pos := func(off int) token.Pos { return fset.File(1).Pos(off) }
	leaseA := &analysis.Analyzer{Name: "lease"}
	fenceA := &analysis.Analyzer{Name: "fence"}
	required := &analysis.Analyzer{Name: "lazyssa"}
	sql := strings.Index(src, "`SELECT")
	unlocked := analysis.Diagnostic{Pos: pos(sql), End: pos(sql + 28), Category: "fence", Message: "fence reads worker_leases without a row lock",
		Related:        []analysis.RelatedInformation{{Pos: pos(sql + 1), Message: "in this SQL"}},
		SuggestedFixes: []analysis.SuggestedFix{{Message: "Add FOR SHARE", TextEdits: []analysis.TextEdit{{Pos: pos(sql + 27), NewText: []byte(" FOR SHARE")}}}}}
	directive := analysis.Diagnostic{Pos: pos(0), Category: "lease", Message: "malformed directive"}
	roots := []*depcheck.Root{
		{ID: "example.com/lease", Fset: fset, Diagnostics: []depcheck.Diagnostic{
			{Analyzer: required, Diagnostic: analysis.Diagnostic{Pos: pos(0), Message: "not a rule's"}},
			{Analyzer: fenceA, Diagnostic: unlocked},
			{Analyzer: leaseA, Diagnostic: directive},
		}},
		{ID: "example.com/lease [example.com/lease.test]", Fset: fset, Diagnostics: []depcheck.Diagnostic{
			{Analyzer: leaseA, Diagnostic: analysis.Diagnostic{Pos: pos(8), Category: "lease", Message: "in the test variant only"}},
			{Analyzer: fenceA, Diagnostic: unlocked},
		}},
	}
	fs, tree, err := rootFindings(roots, []*analysis.Analyzer{leaseA, fenceA})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, strings.TrimPrefix(f.Posn, dir+string(filepath.Separator))+" "+f.rule()+": "+f.Message)
	}
	want := []string{
		"lease.go:1:1 lease: malformed directive",
		"lease.go:1:9 lease: in the test variant only",
		"lease.go:3:11 fence: fence reads worker_leases without a row lock",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f := fs[2]
	wantFix := []suggestedFix{{Message: "Add FOR SHARE", Edits: []textEdit{{Filename: name, Start: sql + 27, End: sql + 27, New: " FOR SHARE", size: len(src)}}}}
	if f.End != name+":3:39" || !reflect.DeepEqual(f.SuggestedFixes, wantFix) || len(f.Related) != 1 || f.Related[0].End != name+":3:12" {
		t.Errorf("finding %+v", f)
	}
	if fs[0].End != fs[0].Posn {
		t.Errorf("a finding without an end: end %q, want its position %q", fs[0].End, fs[0].Posn)
	}
	if n := len(tree["example.com/lease"]["fence"]) + len(tree["example.com/lease [example.com/lease.test]"]["fence"]); n != 2 {
		t.Errorf("JSON tree: %d fence findings, want one per root: %+v", n, tree)
	}
	if _, ok := tree["example.com/lease"]["lazyssa"]; ok || len(tree) != 2 {
		t.Errorf("JSON tree %+v, want two roots and no lazyssa", tree)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"suggested_fixes":[{"message":"Add FOR SHARE","edits":[{"filename":`; !strings.Contains(string(data), want) {
		t.Errorf("JSON %s, want %s…", data, want)
	}

	bad := unlocked
	bad.SuggestedFixes = []analysis.SuggestedFix{{Message: "Backwards", TextEdits: []analysis.TextEdit{{Pos: pos(sql + 5), End: pos(sql), NewText: []byte("x")}}}}
	roots[0].Diagnostics = []depcheck.Diagnostic{{Analyzer: fenceA, Diagnostic: bad}}
	if _, _, err := rootFindings(roots[:1], []*analysis.Analyzer{fenceA}); err == nil || !strings.Contains(err.Error(), "fence suggests a fix that is not valid (Backwards)") {
		t.Errorf("a fix that ends before it starts: error %v", err)
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
