package plugin

import (
	"cmp"
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/depcheck"
)

// golangci-lint runs an analyzer that has facts on every package that the
// linted packages import, and parses and type-checks each of them from
// source to compute the facts (unless its own cache has them). The rules
// need facts only in the import graph of a lease package, and most
// repositories have few lease packages or none: on prometheus, with none,
// the rules' facts made golangci-lint take 3.7 times as long as depguard
// and forbidigo.
//
// So the plugin's one analyzer has no facts. In each linted package it
// decides, from the import path and the files' text, whether the package
// can have a finding, as the standalone command does before it loads
// anything (a lease package by setting or directive, or a file with a
// comment that starts with leaseguard, or a word one edit from it). Only
// such a package is analysed again, with its test variants and every
// package they import, and every rule runs on it with their facts; what
// they find in the linted package is reported at golangci-lint's
// positions. A repository without a lease
// package costs golangci-lint its own load. The second analysis goes
// through the graph one package at a time, in dependency order, each
// type-checked from source against its imports' export data and dropped
// once its facts are kept (internal/depcheck), not the whole graph held
// from source at once (docs/performance.md has the figures). It reads the
// go command's
// environment (GOFLAGS=-tags=… reaches it; golangci-lint's build-tags
// setting does not), and two lease packages' graphs are analysed one
// after the other, never at once.

// guard is the state of the plugin's analyzer.
type guard struct {
	analyzer *analysis.Analyzer
	rules    []*analysis.Analyzer
	lease    *config.Matcher

	mu   sync.Mutex // guards runs
	runs map[runKey]*graphRun
	busy sync.Mutex // held while a graph is analysed
}

// A runKey names one package's second analysis: its directory and import path
// (the tested package's, for an external test package).
type runKey struct{ dir, path string }

// A graphRun is the outcome of one second analysis: the findings of every
// variant of the package, by the variant's files.
type graphRun struct {
	once     sync.Once
	variants map[string][]finding // by filesKey
	err      error
}

// A finding is a rule's diagnostic with its positions as file offsets,
// so that they can be placed in golangci-lint's file set.
type finding struct {
	rule string
	d    analysis.Diagnostic
	fset *token.FileSet
}

// newGuard returns the plugin's analyzer state for rules bound to cfg.
func newGuard(cfg *config.Config, rules []*analysis.Analyzer) *guard {
	g := &guard{rules: rules, lease: config.NewMatcher(cfg.Lease.Packages), runs: make(map[runKey]*graphRun)}
	g.analyzer = &analysis.Analyzer{
		Name: Name,
		Doc: `run leaseguard's rules on lease packages, with their imports' facts

leaseguard's rules (imports, clock, fence, and the lease analyzer, which
checks directives) on each package that can have a finding: a lease
package by -lease.packages or //leaseguard:lease, or a package with a
comment that starts with leaseguard or a word one edit from it. Such a
package is analysed again
with its imports, one package at a time, for the rules' facts; other
packages cost nothing.`,
		URL: "https://github.com/leaseguard/leaseguard/blob/main/docs/integrations.md#golangci-lint",
		Run: g.run,
	}
	return g
}

func (g *guard) run(pass *analysis.Pass) (any, error) {
	path := pass.Pkg.Path()
	if strings.HasSuffix(path, ".test") || len(pass.Files) == 0 {
		return nil, nil // go test's generated main
	}
	files := make(map[string]*token.File, len(pass.Files))
	names := make([]string, 0, len(pass.Files))
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		files[tf.Name()] = tf
		names = append(names, tf.Name())
	}
	tested := strings.TrimSuffix(path, "_test")
	if !lease.Candidate(g.lease, []string{path, tested}, names) {
		return nil, nil
	}
	r := g.graph(runKey{dir: packageDir(names), path: tested}, pass.TypesSizes)
	if r.err != nil {
		return nil, r.err
	}
	var ds []analysis.Diagnostic
	for _, f := range r.variants[filesKey(names)] {
		if d, ok := f.place(files); ok {
			ds = append(ds, d)
		}
	}
	for _, d := range byLine(pass.Fset, ds) {
		pass.Report(d)
	}
	return nil, nil
}

// golangci-lint's issue has one position and a text: it turns each
// related position of a diagnostic into an issue of its own ("(related
// information)"), and by default (issues.uniq-by-line) keeps one issue
// per line, the first it sorts there. A related position ("the SQL call")
// then displaces the finding on its line, and of three findings at one
// statement two are lost. So the plugin writes a finding's related
// positions into its text, and reports the findings on one line as one
// diagnostic: every finding is shown, whatever uniq-by-line says.

// byLine returns ds, in order, with the diagnostics on one line joined
// into the first one there: each later one's message follows, after
// "; " and its line:column, and their fixes are kept.
func byLine(fset *token.FileSet, ds []analysis.Diagnostic) []analysis.Diagnostic {
	type line struct {
		file string
		line int
	}
	var out []analysis.Diagnostic
	first := make(map[line]int) // index in out
	for _, d := range ds {
		p := fset.Position(d.Pos)
		k := line{p.Filename, p.Line}
		i, ok := first[k]
		if !ok {
			first[k] = len(out)
			out = append(out, d)
			continue
		}
		out[i].Message += fmt.Sprintf("; %d:%d: %s", p.Line, p.Column, d.Message)
		out[i].SuggestedFixes = append(out[i].SuggestedFixes, d.SuggestedFixes...)
	}
	return out
}

// relatedText returns f's related positions as text to follow its
// message: " (in this SQL: renew.go:12:29)", each position's file
// relative to the directory of the finding's, several separated by "; ".
func (f finding) relatedText() string {
	if len(f.d.Related) == 0 {
		return ""
	}
	dir := filepath.Dir(f.fset.Position(f.d.Pos).Filename)
	parts := make([]string, 0, len(f.d.Related))
	for _, r := range f.d.Related {
		p := f.fset.Position(r.Pos)
		if !p.IsValid() {
			parts = append(parts, r.Message)
			continue
		}
		if rel, err := filepath.Rel(dir, p.Filename); err == nil {
			p.Filename = filepath.ToSlash(rel)
		}
		parts = append(parts, r.Message+": "+p.String())
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// packageDir returns the directory of the package whose files are names:
// that of a file named *.go (cgo's output, among a package's compiled
// files, lies in the build cache without that suffix).
func packageDir(names []string) string {
	for _, name := range names {
		if strings.HasSuffix(name, ".go") {
			return filepath.Dir(name)
		}
	}
	return filepath.Dir(names[0])
}

// graph returns the findings of the rules on the package that k names and
// on its test variants, analysing them the first time.
func (g *guard) graph(k runKey, sizes types.Sizes) *graphRun {
	g.mu.Lock()
	r, ok := g.runs[k]
	if !ok {
		r = new(graphRun)
		g.runs[k] = r
	}
	g.mu.Unlock()
	r.once.Do(func() {
		g.busy.Lock()
		defer g.busy.Unlock()
		r.variants, r.err = g.analyse(k, sizes)
	})
	return r
}

// analyse runs the rules on the package that k names, its test variants
// and their imports, one package at a time (see depcheck).
func (g *guard) analyse(k runKey, sizes types.Sizes) (map[string][]finding, error) {
	roots, err := depcheck.Run(k.dir, k.path, sizes, g.rules)
	if err != nil {
		return nil, fmt.Errorf("analysing %s with its imports: %w", k.path, err)
	}
	variants := make(map[string][]finding)
	for _, r := range roots {
		key := filesKey(r.Files)
		for _, d := range r.Diagnostics {
			variants[key] = append(variants[key], finding{rule: d.Analyzer.Name, d: d.Diagnostic, fset: r.Fset})
		}
	}
	for _, fs := range variants {
		slices.SortStableFunc(fs, func(a, b finding) int {
			return cmp.Or(cmp.Compare(a.d.Pos, b.d.Pos), strings.Compare(a.d.Message, b.d.Message))
		})
	}
	return variants, nil
}

// filesKey names a package variant by its files.
func filesKey(names []string) string {
	return strings.Join(slices.Sorted(slices.Values(names)), "\n")
}

// place returns f's diagnostic at the same offsets of files, golangci-lint's
// files of the package, with the rule's name before its message as
// golangci-lint writes it for an analyzer of a plugin with several (the
// plugin's analyzer has its name), and its related positions after it
// (see relatedText), not as related information. Fixes outside files are
// left out; ok is false when the finding itself is outside them.
func (f finding) place(files map[string]*token.File) (d analysis.Diagnostic, ok bool) {
	move := func(pos token.Pos) (token.Pos, bool) {
		if !pos.IsValid() {
			return token.NoPos, true
		}
		from := f.fset.File(pos)
		to := files[from.Name()]
		if to == nil || to.Size() != from.Size() {
			return token.NoPos, false
		}
		return to.Pos(from.Offset(pos)), true
	}
	d = f.d
	d.Category = f.rule
	d.Message = f.rule + ": " + d.Message + f.relatedText()
	var okEnd bool
	if d.Pos, ok = move(d.Pos); !ok {
		return d, false
	}
	if d.End, okEnd = move(d.End); !okEnd {
		d.End = token.NoPos
	}
	d.Related = nil
	d.SuggestedFixes = nil
fixes:
	for _, fix := range f.d.SuggestedFixes {
		moved := analysis.SuggestedFix{Message: fix.Message}
		for _, e := range fix.TextEdits {
			pos, ok1 := move(e.Pos)
			end, ok2 := move(e.End)
			if !ok1 || !ok2 {
				continue fixes
			}
			moved.TextEdits = append(moved.TextEdits, analysis.TextEdit{Pos: pos, End: end, NewText: e.NewText})
		}
		d.SuggestedFixes = append(d.SuggestedFixes, moved)
	}
	return d, true
}
