package main

import (
	"bytes"
	"strings"
	"testing"
)

const labels = `# entry: sample
# module: example.com/lease@v1.2.3
# module: example.com/lease/driver@v1.2.3     (the driver's SQL)
# packages: example.com/lease example.com/lease/driver/...
# configured: -fence.table=leases -fence.holder-column=owner
# note: free text
module	file	line	rule	why
example.com/lease	lease.go	10-14	clock	time.Now decides the renewal
example.com/lease	lease.go	12	clock	a second read on an overlapping line
example.com/lease/driver	q.sql.go	40	fence	renewal without expiry test
example.com/lease/driver	q.sql.go	80-90	fence	rows affected discarded
# ok	example.com/lease	lease.go	30	clock	only logged
`

var mods = []module{
	{"example.com/lease", "/mod/example.com/lease@v1.2.3"},
	{"example.com/lease/driver", "/mod/example.com/lease/driver@v1.2.3"},
}

const output = `{
	"example.com/lease": {
		"clock": [
			{"category": "clock", "posn": "/mod/example.com/lease@v1.2.3/lease.go:12:3", "message": "a"},
			{"category": "clock", "posn": "/mod/example.com/lease@v1.2.3/lease.go:13:3", "message": "b"},
			{"category": "clock", "posn": "/mod/example.com/lease@v1.2.3/lease.go:14:3", "message": "c"},
			{"category": "clock", "posn": "/mod/example.com/lease@v1.2.3/lease.go:30:3", "message": "d"}
		],
		"imports": [
			{"category": "imports", "posn": "/mod/example.com/lease@v1.2.3/lease_test.go:5:2", "message": "e"}
		]
	},
	"example.com/lease [example.com/lease.test]": {
		"clock": [
			{"category": "clock", "posn": "/mod/example.com/lease@v1.2.3/lease.go:12:3", "message": "a"}
		]
	},
	"example.com/lease/driver": {
		"fence": [
			{"category": "fence", "posn": "/mod/example.com/lease/driver@v1.2.3/q.sql.go:41:2", "message": "f"},
			{"category": "fence", "posn": "/mod/example.com/lease/driver@v1.2.3/q.sql.go:85:2", "message": "g"}
		]
	}
}`

func TestParseEntry(t *testing.T) {
	e, err := parseEntry(strings.NewReader(labels))
	if err != nil {
		t.Fatal(err)
	}
	if e.name != "sample" || len(e.modules) != 2 || e.modules[1] != "example.com/lease/driver@v1.2.3" {
		t.Errorf("header: name %q modules %q", e.name, e.modules)
	}
	if got := strings.Join(e.packages, " "); got != "example.com/lease example.com/lease/driver/..." {
		t.Errorf("packages: %q", got)
	}
	if got := strings.Join(e.configured, " "); got != "-fence.table=leases -fence.holder-column=owner" {
		t.Errorf("configured: %q", got)
	}
	if len(e.labels) != 4 || len(e.oks) != 1 {
		t.Fatalf("%d labels and %d oks, want 4 and 1", len(e.labels), len(e.oks))
	}
	if l := e.labels[0]; l.from != 10 || l.to != 14 || l.rule != "clock" {
		t.Errorf("first label: %+v", l)
	}
}

func TestParseEntryRejects(t *testing.T) {
	for name, text := range map[string]string{
		"no entry":       "# module: m@v1\n# packages: m\n",
		"no module":      "# entry: x\n# packages: m\n",
		"no packages":    "# entry: x\n# module: m@v1\n",
		"four fields":    "# entry: x\n# module: m@v1\n# packages: m\nm\tf.go\t3\tclock\n",
		"unknown rule":   "# entry: x\n# module: m@v1\n# packages: m\nm\tf.go\t3\tlint\twhy\n",
		"backward range": "# entry: x\n# module: m@v1\n# packages: m\nm\tf.go\t9-3\tclock\twhy\n",
		"absolute file":  "# entry: x\n# module: m@v1\n# packages: m\nm\t/tmp/f.go\t3\tclock\twhy\n",
	} {
		if _, err := parseEntry(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPlace(t *testing.T) {
	f, err := place(diagnostic{Category: "fence", Posn: "/mod/example.com/lease/driver@v1.2.3/internal/q.sql.go:7:1"}, "fence", mods)
	if err != nil {
		t.Fatal(err)
	}
	// The longest module directory wins: the driver, not its parent.
	if f.module != "example.com/lease/driver" || f.file != "internal/q.sql.go" || f.line != 7 {
		t.Errorf("placed as %s", f)
	}
	f, err = place(diagnostic{Posn: "/elsewhere/x.go:3:1"}, "clock", mods)
	if err != nil {
		t.Fatal(err)
	}
	if f.module != "" || f.file != "/elsewhere/x.go" || f.rule != "clock" || f.test {
		t.Errorf("a file outside the modules: %+v", f)
	}
	f, err = place(diagnostic{Posn: "/cache/81/81652edb-d:14:2"}, "imports", mods)
	if err != nil {
		t.Fatal(err)
	}
	if !f.test {
		t.Errorf("a generated test main is not a test file: %+v", f)
	}
	if _, err := place(diagnostic{Posn: "nowhere"}, "clock", mods); err == nil {
		t.Error("a position without a line: no error")
	}
}

func TestScore(t *testing.T) {
	e, err := parseEntry(strings.NewReader(labels))
	if err != nil {
		t.Fatal(err)
	}
	findings, err := parseFindings([]byte(output), mods)
	if err != nil {
		t.Fatal(err)
	}
	r := &result{entry: e, mode: "default"}
	r.score(findings)
	// clock: 12 goes to the single-line label and 13 to the range (a
	// greedy match of 12 to the range would have cost a true positive);
	// 14 is a duplicate on the range; 30 is judged fine, so a false
	// positive. fence: 41 is off by one (a false positive and a miss), 85
	// is in its range. imports: a test file, not scored.
	want := map[string][4]int{
		"clock":   {2, 1, 0, 1},
		"fence":   {1, 1, 1, 0},
		"imports": {0, 0, 0, 0},
	}
	for rule, w := range want {
		if got := [4]int{r.tp[rule], r.fp[rule], r.fn[rule], r.dup[rule]}; got != w {
			t.Errorf("%s: TP/FP/FN/dup = %v, want %v", rule, got, w)
		}
	}
	if r.tests["imports"] != 1 {
		t.Errorf("test-file findings: %v, want one imports", r.tests)
	}
	var out bytes.Buffer
	report(&out, []*result{r})
	for _, want := range []string{
		"total              default    clock      2    1    0    1      0.67   1.00",
		"default sample clock example.com/lease/lease.go:30: d",
		"judged fine at example.com/lease/lease.go:30: only logged",
		"default sample fence example.com/lease/driver/q.sql.go:40: renewal without expiry test",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseFindingsError(t *testing.T) {
	findings, err := parseFindings([]byte(`{"p": {"fence": {"error": "boom"}, "clock": [{"posn": "/mod/example.com/lease@v1.2.3/a.go:1:1", "message": "m"}]}}`), mods)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error %v, want the analyzer's", err)
	}
	if len(findings) != 1 {
		t.Errorf("%d findings, want the other analyzer's one", len(findings))
	}
	if _, err := parseFindings([]byte("not json"), mods); err == nil {
		t.Error("no error for output that is not JSON")
	}
}

func TestParseFindingsSkipsNotes(t *testing.T) {
	mods := []module{{path: "example.com/lease", dir: "/mod/example.com/lease@v1.2.3"}}
	findings, err := parseFindings([]byte(`{"p": {"fence": [
		{"category": "note", "posn": "/mod/example.com/lease@v1.2.3/a.go:1:1", "message": "fence checked no write here"},
		{"category": "explain", "posn": "/mod/example.com/lease@v1.2.3/a.go:1:1", "message": "explain: 2 SQL calls read, 0 not"},
		{"category": "fence", "posn": "/mod/example.com/lease@v1.2.3/a.go:3:1", "message": "m"}]}}`), mods)
	if err != nil || len(findings) != 1 || findings[0].line != 3 {
		t.Fatalf("findings %v, %v; want the one at line 3: notes and explanations are not findings", findings, err)
	}
}
