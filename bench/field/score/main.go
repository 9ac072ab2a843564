// Command score compares leaseguard's findings on public lease packages
// with labels that a reviewer wrote by reading the code.
//
//	score -dir DIR ENTRY.tsv...
//
// For each labels file ENTRY.tsv (the format is in bench/field/README.md),
// it reads DIR/ENTRY/modules.tsv (module path, tab, the module's directory)
// and the -json output of each mode, DIR/ENTRY/MODE.json (default,
// configured), which bench/field/run.sh writes. A finding is its module,
// its file relative to the module's root, its line and its rule; findings
// in test files (_test.go, and a test binary's generated main) are listed
// apart and not scored. Findings and labels are matched one to one on
// module, file and rule with the finding's line in the label's range; a
// further finding on a label that is already matched is a duplicate, not a
// false positive.
//
// It prints TP/FP/FN, precision and recall per entry, mode and rule, the
// totals per mode and rule over all entries, then every false positive
// (with the message, and the reviewer's note where a "# ok" line covers
// it) and every false negative (with the label's why).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// rules are the scored rules, in the order they are printed.
var rules = []string{"imports", "clock", "fence"}

// modes are leaseguard's runs on each entry, in the order they are printed.
var modes = []string{"default", "configured"}

func main() {
	dir := flag.String("dir", "", "the directory that run.sh wrote (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: score -dir DIR ENTRY.tsv...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var entries []*entry
	for _, path := range flag.Args() {
		e, err := readEntryFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "score: %v\n", err)
			os.Exit(1)
		}
		entries = append(entries, e)
	}
	var results []*result
	for _, e := range entries {
		d := filepath.Join(*dir, e.name)
		mods, err := readModules(filepath.Join(d, "modules.tsv"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "score: %s: %v\n", e.name, err)
			os.Exit(1)
		}
		for _, mode := range modes {
			r := &result{entry: e, mode: mode}
			findings, err := readFindings(filepath.Join(d, mode+".json"), mods)
			if err != nil {
				// A run in which some packages failed is said at the
				// top; the findings of the packages that loaded are
				// scored, and the labels of the others count as
				// missed.
				r.failed = err.Error()
			}
			r.score(findings)
			results = append(results, r)
		}
	}
	report(os.Stdout, results)
}

// A label is a fact about the code, or with ok set a considered non-finding.
type label struct {
	module, file string
	from, to     int // the line range, inclusive
	rule, why    string
	ok           bool
}

func (l *label) covers(f *finding) bool {
	return l.module == f.module && l.file == f.file && l.rule == f.rule && l.from <= f.line && f.line <= l.to
}

func (l *label) String() string {
	lines := strconv.Itoa(l.from)
	if l.to != l.from {
		lines += "-" + strconv.Itoa(l.to)
	}
	return l.module + "/" + l.file + ":" + lines
}

// An entry is one labels file.
type entry struct {
	name       string
	modules    []string // path@version
	packages   []string
	configured []string
	labels     []*label // facts
	oks        []*label // considered non-findings
}

// readEntryFile reads a labels file.
func readEntryFile(path string) (*entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e, err := parseEntry(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if want := strings.TrimSuffix(filepath.Base(path), ".tsv"); e.name != want {
		return nil, fmt.Errorf("%s: entry %q does not match the file name", path, e.name)
	}
	return e, nil
}

// parseEntry reads the labels format: "# key: value" header lines, "# ok"
// lines, the column header, and one label a line.
func parseEntry(r io.Reader) (*entry, error) {
	e := new(entry)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "# ok\t"):
			l, err := parseLabel(strings.Split(line, "\t")[1:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			l.ok = true
			e.oks = append(e.oks, l)
		case strings.HasPrefix(line, "#"):
			key, value, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
			fields := strings.Fields(value)
			switch key {
			case "entry":
				e.name = strings.TrimSpace(value)
			case "module":
				if len(fields) > 0 { // the value may be followed by a comment
					e.modules = append(e.modules, fields[0])
				}
			case "packages":
				e.packages = append(e.packages, fields...)
			case "configured":
				e.configured = append(e.configured, fields...)
			}
		case line == "module\tfile\tline\trule\twhy":
		default:
			l, err := parseLabel(strings.Split(line, "\t"))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			e.labels = append(e.labels, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case e.name == "":
		return nil, errors.New("no '# entry:' line")
	case len(e.modules) == 0:
		return nil, errors.New("no '# module:' line")
	case len(e.packages) == 0:
		return nil, errors.New("no '# packages:' line")
	}
	return e, nil
}

func parseLabel(fields []string) (*label, error) {
	if len(fields) != 5 {
		return nil, fmt.Errorf("want 5 tab-separated fields (module, file, line, rule, why), have %d", len(fields))
	}
	l := &label{module: fields[0], file: fields[1], rule: fields[3], why: fields[4]}
	from, to, isRange := strings.Cut(fields[2], "-")
	var err error
	if l.from, err = strconv.Atoi(from); err != nil {
		return nil, fmt.Errorf("line %q: %w", fields[2], err)
	}
	l.to = l.from
	if isRange {
		if l.to, err = strconv.Atoi(to); err != nil {
			return nil, fmt.Errorf("line %q: %w", fields[2], err)
		}
	}
	switch {
	case l.from < 1 || l.to < l.from:
		return nil, fmt.Errorf("line %q: not N or N-M with 1 <= N <= M", fields[2])
	case l.module == "" || l.file == "" || filepath.IsAbs(l.file):
		return nil, errors.New("module and a module-relative file are required")
	case !isRule(l.rule):
		return nil, fmt.Errorf("rule %q: want one of %s", l.rule, strings.Join(rules, ", "))
	}
	return l, nil
}

func isRule(s string) bool {
	for _, r := range rules {
		if s == r {
			return true
		}
	}
	return false
}

// A module is where a required module's files are.
type module struct{ path, dir string }

// readModules reads lines "path<TAB>dir".
func readModules(path string) ([]module, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var mods []module
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		p, d, ok := strings.Cut(line, "\t")
		if !ok || d == "" {
			return nil, fmt.Errorf("%s: %q is not 'path<TAB>dir'", path, line)
		}
		mods = append(mods, module{p, filepath.Clean(d)})
	}
	return mods, nil
}

// A finding is one diagnostic, placed in its module.
type finding struct {
	module, file string // file relative to the module's root; an absolute path when no module holds it
	line         int
	rule         string
	message      string
	test         bool
}

func (f *finding) String() string {
	if f.module == "" {
		return f.file + ":" + strconv.Itoa(f.line)
	}
	return f.module + "/" + f.file + ":" + strconv.Itoa(f.line)
}

// diagnostic is one element of the go/analysis -json output.
type diagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// readFindings reads leaseguard's -json output: package, then analyzer,
// then a list of diagnostics or an {"error": ...} object. The same
// diagnostic reported in a package and its test variant counts once.
func readFindings(path string, mods []module) ([]*finding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseFindings(data, mods)
}

func parseFindings(data []byte, mods []module) ([]*finding, error) {
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("leaseguard's output is not its -json form: %w", err)
	}
	var errs []string
	seen := make(map[finding]bool)
	var out []*finding
	for _, pkg := range sortedKeys(tree) {
		for _, analyzer := range sortedKeys(tree[pkg]) {
			raw := tree[pkg][analyzer]
			var failure struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(raw, &failure) == nil && failure.Error != "" {
				errs = append(errs, fmt.Sprintf("%s: %s: %s", pkg, analyzer, failure.Error))
				continue
			}
			var diags []diagnostic
			if err := json.Unmarshal(raw, &diags); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", pkg, analyzer, err)
			}
			for _, d := range diags {
				f, err := place(d, analyzer, mods)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", pkg, analyzer, err)
				}
				if !seen[*f] {
					seen[*f] = true
					out = append(out, f)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(errs) > 0 {
		return out, fmt.Errorf("analysis failed: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// place turns a diagnostic's "file:line:col" into a finding in the module
// whose directory holds the file (the longest such directory).
func place(d diagnostic, analyzer string, mods []module) (*finding, error) {
	// The file name may hold colons; the line and column are the last two
	// fields.
	rest := d.Posn[:max(strings.LastIndex(d.Posn, ":"), 0)]
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return nil, fmt.Errorf("position %q is not file:line:col", d.Posn)
	}
	line, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return nil, fmt.Errorf("position %q: %w", d.Posn, err)
	}
	file := filepath.Clean(rest[:i])
	rule := d.Category
	if rule == "" {
		rule = analyzer
	}
	f := &finding{file: file, line: line, rule: rule, message: d.Message, test: strings.HasSuffix(file, "_test.go")}
	best := -1
	for i, m := range mods {
		if strings.HasPrefix(file, m.dir+string(filepath.Separator)) && (best < 0 || len(m.dir) > len(mods[best].dir)) {
			best = i
		}
	}
	if best >= 0 {
		f.module = mods[best].path
		f.file = filepath.ToSlash(strings.TrimPrefix(file, mods[best].dir+string(filepath.Separator)))
	} else if !strings.HasSuffix(file, ".go") {
		// The main package of a test binary, which the go command
		// generates into its build cache under a name without .go: a
		// test file too.
		f.test = true
	}
	return f, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A result is one mode's run on one entry, scored.
type result struct {
	entry  *entry
	mode   string
	failed string // why the run produced no usable output, if it did not

	tp, fp, fn, dup map[string]int // per rule
	tests           map[string]int // findings in test files, per rule
	testFindings    []*finding     // not scored
	others          []*finding     // findings of other analyzers, not scored
	falsePos        []*finding
	missed          []*label
}

// score matches findings to labels one to one (a maximum matching, so
// that overlapping ranges do not cost a match), then counts.
func (r *result) score(findings []*finding) {
	r.tp, r.fp, r.fn, r.dup, r.tests = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	var scored []*finding
	for _, f := range findings {
		switch {
		case !isRule(f.rule):
			r.others = append(r.others, f)
		case f.test:
			r.tests[f.rule]++
			r.testFindings = append(r.testFindings, f)
		default:
			scored = append(scored, f)
		}
	}
	labelOf, findingOf := match(scored, r.entry.labels)
	for i, f := range scored {
		switch {
		case labelOf[i] >= 0:
			r.tp[f.rule]++
		case coversAny(r.entry.labels, f):
			r.dup[f.rule]++
		default:
			r.fp[f.rule]++
			r.falsePos = append(r.falsePos, f)
		}
	}
	for j, l := range r.entry.labels {
		if findingOf[j] < 0 {
			r.fn[l.rule]++
			r.missed = append(r.missed, l)
		}
	}
}

func coversAny(labels []*label, f *finding) bool {
	for _, l := range labels {
		if l.covers(f) {
			return true
		}
	}
	return false
}

// match pairs findings with labels that cover them, as many pairs as
// possible (Kuhn's augmenting paths; the sets are small). labelOf[i] is
// the label matched to finding i, findingOf[j] the finding matched to
// label j, -1 for none.
func match(findings []*finding, labels []*label) (labelOf, findingOf []int) {
	labelOf = make([]int, len(findings))
	findingOf = make([]int, len(labels))
	for i := range labelOf {
		labelOf[i] = -1
	}
	for j := range findingOf {
		findingOf[j] = -1
	}
	var try func(i int, visited []bool) bool
	try = func(i int, visited []bool) bool {
		for j, l := range labels {
			if visited[j] || !l.covers(findings[i]) {
				continue
			}
			visited[j] = true
			if findingOf[j] < 0 || try(findingOf[j], visited) {
				labelOf[i], findingOf[j] = j, i
				return true
			}
		}
		return false
	}
	for i := range findings {
		try(i, make([]bool, len(labels)))
	}
	return labelOf, findingOf
}

// ratio prints n/d with two decimals, or "-" when d is zero.
func ratio(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(d))
}

func report(w io.Writer, results []*result) {
	for _, r := range results {
		if r.failed != "" {
			fmt.Fprintf(w, "FAILED %s %s: %s\n", r.entry.name, r.mode, r.failed)
		}
	}
	row := func(entry, mode, rule string, tp, fp, fn, dup, tests int) {
		fmt.Fprintf(w, "%-18s %-10s %-7s %4d %4d %4d %4d %9s %6s %5d\n",
			entry, mode, rule, tp, fp, fn, dup, ratio(tp, tp+fp), ratio(tp, tp+fn), tests)
	}
	header := func() {
		fmt.Fprintf(w, "%-18s %-10s %-7s %4s %4s %4s %4s %9s %6s %5s\n",
			"entry", "mode", "rule", "TP", "FP", "FN", "dup", "precision", "recall", "tests")
	}
	header()
	for _, r := range results {
		for _, rule := range rules {
			row(r.entry.name, r.mode, rule, r.tp[rule], r.fp[rule], r.fn[rule], r.dup[rule], r.tests[rule])
		}
	}
	fmt.Fprintln(w)
	header()
	for _, mode := range modes {
		for _, rule := range rules {
			var tp, fp, fn, dup, tests int
			for _, r := range results {
				if r.mode == mode {
					tp, fp, fn, dup, tests = tp+r.tp[rule], fp+r.fp[rule], fn+r.fn[rule], dup+r.dup[rule], tests+r.tests[rule]
				}
			}
			row("total", mode, rule, tp, fp, fn, dup, tests)
		}
	}
	fmt.Fprintln(w, "\n(tests: findings in test files, not scored; dup: a further finding on a matched label)")

	fmt.Fprintln(w, "\nfalse positives:")
	for _, r := range results {
		for _, f := range r.falsePos {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
			for _, ok := range r.entry.oks {
				if ok.covers(f) {
					fmt.Fprintf(w, "      judged fine at %s: %s\n", ok, ok.why)
				}
			}
		}
	}
	fmt.Fprintln(w, "\nfalse negatives:")
	for _, r := range results {
		for _, l := range r.missed {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, l.rule, l, l.why)
		}
	}
	fmt.Fprintln(w, "\nfindings in test files (not scored):")
	for _, r := range results {
		for _, f := range r.testFindings {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
		}
	}
	var others bool
	for _, r := range results {
		for _, f := range r.others {
			if !others {
				fmt.Fprintln(w, "\nother diagnostics (not scored):")
				others = true
			}
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
		}
	}
}
