package driver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"go/token"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/depcheck"
)

// A finding is one diagnostic as go vet -json prints it (x/tools'
// checkers print the same shape), whether go vet or a run in process
// analysed the package: every output of the command (text, JSON, SARIF)
// and -fix are written from findings.
type finding struct {
	Category       string         `json:"category,omitempty"`
	Posn           string         `json:"posn"`
	End            string         `json:"end"`
	Message        string         `json:"message"`
	SuggestedFixes []suggestedFix `json:"suggested_fixes,omitempty"`
	Related        []related      `json:"related,omitempty"`

	analyzer string // the analyzer that reported it
}

// related is a finding's related position ("in this SQL").
type related struct {
	Posn    string `json:"posn"`
	End     string `json:"end"`
	Message string `json:"message"`
}

// A suggestedFix is a fix that a finding offers: edits to apply together.
type suggestedFix struct {
	Message string     `json:"message"`
	Edits   []textEdit `json:"edits"`
}

// A textEdit replaces the bytes from Start to End (offsets, End
// excluded) of a file by New.
type textEdit struct {
	Filename string `json:"filename"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	New      string `json:"new"`

	size int // the file's size when it was analysed; 0: not known
}

// rule returns the rule that f belongs to: every leaseguard finding has
// its rule as category.
func (f finding) rule() string { return cmp.Or(f.Category, f.analyzer) }

// counts reports whether f counts as a finding for the exit code: notes
// (-lease.notes) and explanations (-lease.explain) are printed but are
// not findings.
func (f finding) counts() bool {
	return f.Category != lease.ExplainCategory && f.Category != lease.NoteCategory
}

// treeFindings returns the findings of a JSON tree (package ID ->
// analyzer -> findings, or an error object), as go vet -json prints one
// per unit, in file order (see sortFindings), and a line for each
// analyzer that failed on a package.
func treeFindings(tree map[string]map[string]json.RawMessage) (fs []finding, failed []string) {
	for id, byAnalyzer := range tree {
		for name, raw := range byAnalyzer {
			var ds []finding
			if json.Unmarshal(raw, &ds) != nil {
				// An analyzer that failed on a package: {"error": "..."}.
				var e struct{ Error string }
				_ = json.Unmarshal(raw, &e)
				failed = append(failed, fmt.Sprintf("%s: %s: %s", id, name, e.Error))
				continue
			}
			for i := range ds {
				ds[i].analyzer = name
			}
			fs = append(fs, ds...)
		}
	}
	slices.Sort(failed)
	return sortFindings(fs), failed
}

// rootFindings returns the findings of rules on roots, a run in
// process's (see depcheck), as go vet -json prints them. fs are in the
// order of x/tools' checkers' text output: rule by rule, in the order of
// rules, and for each the roots in their order (see depcheck.Analyze),
// each root's findings in the order the rule reported them, a finding
// that two roots report (a package and its test variant) once. tree is
// go vet -json's: root ID -> rule -> findings, every root's own. The
// roots' findings of analyzers that rules only require are left out. The
// error says which rule suggested a fix that is not valid.
func rootFindings(roots []*depcheck.Root, rules []*analysis.Analyzer) (fs []finding, tree map[string]map[string][]finding, err error) {
	type key struct {
		posn, end, analyzer, message string
	}
	seen := make(map[key]bool)
	tree = make(map[string]map[string][]finding)
	for _, a := range rules {
		for _, r := range roots {
			for _, d := range r.Diagnostics {
				if d.Analyzer != a {
					continue
				}
				f, err := newFinding(r.Fset, a, d.Diagnostic)
				if err != nil {
					return nil, nil, err
				}
				if tree[r.ID] == nil {
					tree[r.ID] = make(map[string][]finding)
				}
				tree[r.ID][a.Name] = append(tree[r.ID][a.Name], f)
				if k := (key{f.Posn, f.End, a.Name, f.Message}); !seen[k] {
					seen[k] = true
					fs = append(fs, f)
				}
			}
		}
	}
	return fs, tree, nil
}

// newFinding returns d, which a reported, as go vet -json prints it: an
// end that is not given is the position, and so is a fix's edit's. The
// error says why one of d's fixes is not valid: an edit that ends before
// it starts, or outside its file.
func newFinding(fset *token.FileSet, a *analysis.Analyzer, d analysis.Diagnostic) (finding, error) {
	f := finding{
		Category: d.Category,
		Posn:     fset.Position(d.Pos).String(),
		End:      fset.Position(cmp.Or(d.End, d.Pos)).String(),
		Message:  d.Message,
		analyzer: a.Name,
	}
	for _, fix := range d.SuggestedFixes {
		sf := suggestedFix{Message: fix.Message, Edits: []textEdit{}}
		for _, e := range fix.TextEdits {
			file := fset.File(e.Pos)
			end := cmp.Or(e.End, e.Pos)
			if file == nil || end < e.Pos || fset.File(end) != file {
				return finding{}, fmt.Errorf("%s suggests a fix that is not valid (%s): an edit from %s to %s", a.Name, fix.Message, fset.Position(e.Pos), fset.Position(end))
			}
			sf.Edits = append(sf.Edits, textEdit{Filename: file.Name(), Start: file.Offset(e.Pos), End: file.Offset(end), New: string(e.NewText), size: file.Size()})
		}
		f.SuggestedFixes = append(f.SuggestedFixes, sf)
	}
	for _, r := range d.Related {
		f.Related = append(f.Related, related{Posn: fset.Position(r.Pos).String(), End: fset.Position(cmp.Or(r.End, r.Pos)).String(), Message: r.Message})
	}
	return f, nil
}

// sortFindings sorts fs in file order, whatever order the packages
// finished in, and keeps each once: a package and its test variant report
// the same finding.
func sortFindings(fs []finding) []finding {
	slices.SortFunc(fs, func(a, b finding) int {
		return cmp.Or(comparePosn(a.Posn, b.Posn), strings.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(fs, func(a, b finding) bool { return a.Posn == b.Posn && a.Message == b.Message })
}

// writeText writes fs as x/tools' checkers' text output does, a line
// per finding and one per related position, indented by a tab, each
// followed, if context is 0 or more, by the lines from its position to
// its end with context lines before and after them. It returns how many
// of fs count (see finding.counts).
func writeText(w io.Writer, fs []finding, context int) (n int) {
	for _, f := range fs {
		fmt.Fprintf(w, "%s: %s\n", f.Posn, f.Message)
		writeContext(w, f.Posn, f.End, context)
		for _, r := range f.Related {
			fmt.Fprintf(w, "%s: \t%s\n", r.Posn, r.Message)
			writeContext(w, r.Posn, r.End, context)
		}
		if f.counts() {
			n++
		}
	}
	return n
}

// writeContext writes, if context is 0 or more, the lines of posn's file
// from posn's line to end's (posn's if end is empty), with context lines
// before and after, each after its number and a tab, as x/tools' checkers
// do. A file it cannot read has no lines.
func writeContext(w io.Writer, posn, end string, context int) {
	if context < 0 {
		return
	}
	file, line, _ := splitPosn(posn)
	last := line
	if end != "" {
		_, last, _ = splitPosn(end)
	}
	data, _ := os.ReadFile(file)
	lines := strings.Split(string(data), "\n")
	for i := max(line-context, 1); i <= last+context && i <= len(lines); i++ {
		fmt.Fprintf(w, "%d\t%s\n", i, lines[i-1])
	}
}

// badSettings reports whether any of fs says that a setting aims at
// nothing (a -fence.table Go name that does not resolve, see
// config.SettingError), and prints each such message once on stderr, as
// a bad flag is: the command then exits 2, whatever its output.
func badSettings(fs []finding, stderr io.Writer) bool {
	var msgs []string
	for _, f := range fs {
		if f.Category == lease.Name && config.IsSettingError(f.Message) && !slices.Contains(msgs, f.Message) {
			msgs = append(msgs, f.Message)
			fmt.Fprintf(stderr, "leaseguard: %s\n", f.Message)
		}
	}
	return len(msgs) > 0
}

// comparePosn orders file:line:col positions by file, then line and
// column as numbers.
func comparePosn(a, b string) int {
	af, al, ac := splitPosn(a)
	bf, bl, bc := splitPosn(b)
	return cmp.Or(strings.Compare(af, bf), cmp.Compare(al, bl), cmp.Compare(ac, bc))
}

// splitPosn splits a file:line:col position.
func splitPosn(p string) (file string, line, col int) {
	rest, c := cutLast(p)
	file, l := cutLast(rest)
	line, _ = strconv.Atoi(l)
	col, _ = strconv.Atoi(c)
	return file, line, col
}

// cutLast cuts s at its last colon.
func cutLast(s string) (before, after string) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// reportFailed prints the analyzers that failed (see treeFindings) on
// stderr, and returns the exit code they call for: 1 if any, else 0.
func reportFailed(stderr io.Writer, failed []string) int {
	for _, f := range failed {
		fmt.Fprintf(stderr, "leaseguard: %s\n", f)
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}
