package driver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis/checker"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// A finding is one diagnostic as go vet -json and the checker's -json
// print it (they print the same shape), whichever of them analysed the
// package: every output of the command (text, JSON's bad settings, SARIF)
// is written from findings.
type finding struct {
	Category string    `json:"category,omitempty"`
	Posn     string    `json:"posn"`
	End      string    `json:"end"`
	Message  string    `json:"message"`
	Related  []related `json:"related,omitempty"`

	analyzer string // the analyzer that reported it
}

// related is a finding's related position ("in this SQL").
type related struct {
	Posn    string `json:"posn"`
	End     string `json:"end"`
	Message string `json:"message"`
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

// graphFindings returns the findings of the root actions of an in-process
// analysis, as the checker's -json would print them, in file order (see
// sortFindings), and a line for each analyzer that failed on a package.
func graphFindings(graph *checker.Graph) (fs []finding, failed []string) {
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", act, act.Err))
			continue
		}
		fset := act.Package.Fset
		for _, d := range act.Diagnostics {
			f := finding{Category: d.Category, Posn: fset.Position(d.Pos).String(), Message: d.Message, analyzer: act.Analyzer.Name}
			if d.End.IsValid() {
				f.End = fset.Position(d.End).String()
			}
			for _, r := range d.Related {
				rel := related{Posn: fset.Position(r.Pos).String(), Message: r.Message}
				if r.End.IsValid() {
					rel.End = fset.Position(r.End).String()
				}
				f.Related = append(f.Related, rel)
			}
			fs = append(fs, f)
		}
	}
	return sortFindings(fs), failed
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

// writeText writes fs as the checker's text output does, a line per
// finding and one per related position, indented by a tab, and returns
// how many of them count (see finding.counts).
func writeText(w io.Writer, fs []finding) (n int) {
	for _, f := range fs {
		fmt.Fprintf(w, "%s: %s\n", f.Posn, f.Message)
		for _, r := range f.Related {
			fmt.Fprintf(w, "%s: \t%s\n", r.Posn, r.Message)
		}
		if f.counts() {
			n++
		}
	}
	return n
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
