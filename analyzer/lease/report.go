package lease

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
)

// Scope says in which files of a package a rule reports.
type Scope int

const (
	// AllFiles is every file: generated files (sqlc's hold the SQL the
	// program sends, cgo's translation holds the package's code) and test
	// files.
	AllFiles Scope = iota
	// NoTests leaves out test files (_test.go, and so the external test
	// package): tests set up on purpose the states a rule forbids, and
	// are not the lease path.
	NoTests
)

// Covers reports whether pos lies in a file that s covers.
func (s Scope) Covers(fset *token.FileSet, pos token.Pos) bool {
	if s == AllFiles {
		return true
	}
	f := fset.File(pos)
	return f == nil || !strings.HasSuffix(f.Name(), "_test.go")
}

// Reporter is the reporting shell of one rule in a package. A rule says
// what it found; the Reporter decides whether and where it is shown:
//
//   - only in the files of the rule's scope;
//   - not where a //leaseguard:allow for the rule suppresses it;
//   - over the call as written when the finding, or a piece of its related
//     information, is at a call's opening parenthesis (where go/ssa places
//     a call) and gives no end;
//   - once, when the same message is reported twice over the same range;
//   - under the rule's category.
//
// Each rule makes its own, so that rules running in parallel share no
// state.
type Reporter struct {
	pass  *analysis.Pass
	rule  string
	scope Scope
	used  map[*allow]bool
	shown map[shown]bool
	res   *Result
}

// shown identifies a diagnostic already reported.
type shown struct {
	pos, end token.Pos
	msg      string
}

// Reporter returns a Reporter for rule in pass's package, reporting in the
// files that scope covers.
func (r *Result) Reporter(pass *analysis.Pass, rule string, scope Scope) *Reporter {
	return &Reporter{pass: pass, rule: rule, scope: scope, used: make(map[*allow]bool), shown: make(map[shown]bool), res: r}
}

// Covers reports whether a finding at pos would be shown: a rule may skip
// the work of one that would not.
func (rep *Reporter) Covers(pos token.Pos) bool { return rep.scope.Covers(rep.pass.Fset, pos) }

// Report reports d (see [Reporter]).
func (rep *Reporter) Report(d analysis.Diagnostic) {
	if !rep.Covers(d.Pos) {
		return
	}
	if !d.End.IsValid() {
		d.Pos, d.End = rep.extent(d.Pos)
	}
	key := shown{d.Pos, d.End, d.Message}
	if rep.shown[key] {
		return
	}
	rep.shown[key] = true
	if a := rep.suppressor(d.Pos); a != nil {
		rep.used[a] = true
		return
	}
	if d.Related != nil {
		d.Related = slices.Clone(d.Related)
		for i, r := range d.Related {
			if !r.End.IsValid() {
				d.Related[i].Pos, d.Related[i].End = rep.extent(r.Pos)
			}
		}
	}
	if d.Category != NoteCategory {
		d.Category = rep.rule
	}
	rep.pass.Report(d)
}

// NoteCategory is the category of a note: what a rule says of the run
// rather than of the code (fence checked no write here), suppressed as
// the rule's findings are. Under go vet and golangci-lint it is a finding;
// the standalone command prints it and does not count it as one.
const NoteCategory = "note"

// ExplainCategory is the category of what -lease.explain adds: what a
// rule understood of a lease package (its lease tables, the interfaces it
// takes for SQL). Not a finding, and never counted as one by the
// standalone command.
const ExplainCategory = "explain"

// ReportRangef reports a formatted diagnostic at rng (see Report).
func (rep *Reporter) ReportRangef(rng analysis.Range, format string, args ...any) {
	rep.Report(analysis.Diagnostic{Pos: rng.Pos(), End: rng.End(), Message: fmt.Sprintf(format, args...)})
}

// extent returns the range of the call whose opening parenthesis is at pos
// (where go/ssa places a call), or pos and no end. A call is covered as
// written (time.Now(), db.ExecContext(...)), except that a call on the
// result of another call is covered from its method's name (Exec() of
// q.Where(...).Exec()): a finding on the last call of a chain is on that
// call's line.
func (rep *Reporter) extent(pos token.Pos) (token.Pos, token.Pos) {
	for _, f := range rep.pass.Files {
		if f.FileStart <= pos && pos < f.FileEnd {
			path, _ := astutil.PathEnclosingInterval(f, pos, pos)
			for _, n := range path {
				if call, ok := n.(*ast.CallExpr); ok && call.Lparen == pos {
					return callStart(call), call.End()
				}
			}
			break
		}
	}
	return pos, token.NoPos
}

func callStart(call *ast.CallExpr) token.Pos {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if _, chained := ast.Unparen(sel.X).(*ast.CallExpr); chained {
			return sel.Sel.Pos()
		}
	}
	return call.Pos()
}

func (rep *Reporter) suppressor(pos token.Pos) *allow {
	p := rep.pass.Fset.Position(pos)
	for _, a := range rep.res.allows {
		if a.file == p.Filename && a.line == p.Line && slices.Contains(a.rules, rep.rule) {
			return a
		}
	}
	return nil
}

// Finish reports the rule's suppressions that suppressed nothing, so that
// stale ones do not pile up. Call it once the rule has reported everything.
func (rep *Reporter) Finish() {
	for _, a := range rep.res.allows {
		if slices.Contains(a.rules, rep.rule) && !rep.used[a] {
			rep.pass.Report(analysis.Diagnostic{Pos: a.comment.Pos(), End: a.comment.End(), Category: rep.rule,
				Message: fmt.Sprintf("unused //leaseguard:allow %s: nothing here is reported by %s; remove it", rep.rule, rep.rule)})
		}
	}
}
