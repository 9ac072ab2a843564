package lease

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
)

// allow is one well-formed suppression:
//
//	//leaseguard:allow RULE[,RULE...] -- reason
//
// On a line of its own it silences those rules on the line below; after
// code, on its own line.
type allow struct {
	comment *ast.Comment
	file    string
	line    int // the line it silences
	rules   []string
}

func parseAllow(pass *analysis.Pass, c *ast.Comment, args string, known map[string]bool) *allow {
	rules, problem := parseAllowArgs(args, known)
	if problem != "" {
		pass.Report(analysis.Diagnostic{Pos: c.Pos(), End: c.End(), Category: Name, Message: problem})
		return nil
	}
	pos := pass.Fset.Position(c.Pos())
	line := pos.Line
	if ownLine(pass, pos) {
		line++
	}
	return &allow{comment: c, file: pos.Filename, line: line, rules: rules}
}

// parseAllowArgs reads what follows //leaseguard:allow,
//
//	RULE[, RULE...] -- reason
//
// (spaces around the commas optional) and returns the rules, or what is
// wrong.
func parseAllowArgs(args string, known map[string]bool) (rules []string, problem string) {
	list, reason, dashed := strings.Cut(args, "--")
	names, tail := splitRules(list)
	written := quote(strings.Join(names, ","))
	switch {
	case len(names) == 1 && names[0] == "":
		return nil, "//leaseguard:allow names no rule: want //leaseguard:allow RULE -- reason"
	case slices.Contains(names, ""):
		return nil, fmt.Sprintf("//leaseguard:allow %s: a rule name is empty; want a comma-separated list of rules, then -- reason", written)
	}
	for _, r := range names {
		if !known[r] {
			return nil, fmt.Sprintf("//leaseguard:allow names unknown rule %s (rules: %s)", quote(r), ruleList(known))
		}
	}
	names = slices.Compact(names)
	list = strings.Join(names, ",")
	switch {
	case !dashed && tail == "":
		return nil, fmt.Sprintf("//leaseguard:allow %s gives no reason: add -- and say why the finding is safe here", list)
	case !dashed:
		return nil, fmt.Sprintf("//leaseguard:allow %s: want //leaseguard:allow RULE -- reason", list)
	case tail != "":
		return nil, fmt.Sprintf("//leaseguard:allow %s: %s before -- is not a rule; separate rules with commas", list, quote(tail))
	case strings.TrimSpace(reason) == "":
		return nil, fmt.Sprintf("//leaseguard:allow %s gives no reason: add -- and say why the finding is safe here", list)
	}
	return names, ""
}

// splitRules splits s after its leading comma-separated list of words,
// white space around each allowed: "clock, fence because" is [clock fence]
// and "because". An empty entry is "".
func splitRules(s string) (names []string, tail string) {
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		end := strings.IndexFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		if end < 0 {
			end = len(s)
		}
		names = append(names, s[:end])
		s = strings.TrimLeftFunc(s[end:], unicode.IsSpace)
		rest, comma := strings.CutPrefix(s, ",")
		if !comma {
			return names, strings.TrimSpace(s)
		}
		s = rest
	}
}

// ownLine reports whether only white space precedes pos on its line.
func ownLine(pass *analysis.Pass, pos token.Position) bool {
	src, err := pass.ReadFile(pos.Filename)
	if err != nil || pos.Offset > len(src) {
		return pos.Column == 1
	}
	start := bytes.LastIndexByte(src[:pos.Offset], '\n') + 1
	return len(bytes.TrimSpace(src[start:pos.Offset])) == 0
}

func ruleList(known map[string]bool) string {
	var names []string
	for r := range known {
		names = append(names, r)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

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

// Reporter reports one rule's diagnostics in a package: those in its scope
// that no //leaseguard:allow for the rule suppresses, under the rule's
// category. Each rule makes its own, so that rules running in parallel
// share no state.
type Reporter struct {
	pass  *analysis.Pass
	rule  string
	scope Scope
	used  map[*allow]bool
	res   *Result
}

// Reporter returns a Reporter for rule in pass's package, reporting in the
// files that scope covers.
func (r *Result) Reporter(pass *analysis.Pass, rule string, scope Scope) *Reporter {
	return &Reporter{pass: pass, rule: rule, scope: scope, used: make(map[*allow]bool), res: r}
}

// Covers reports whether a finding at pos would be shown: a rule may skip
// the work of one that would not.
func (rep *Reporter) Covers(pos token.Pos) bool { return rep.scope.Covers(rep.pass.Fset, pos) }

// Report reports d under the rule's category, unless it is out of scope
// or suppressed.
func (rep *Reporter) Report(d analysis.Diagnostic) {
	if !rep.Covers(d.Pos) {
		return
	}
	if a := rep.suppressor(d.Pos); a != nil {
		rep.used[a] = true
		return
	}
	d.Category = rep.rule
	rep.pass.Report(d)
}

// ReportRangef reports a formatted diagnostic at rng (see Report).
func (rep *Reporter) ReportRangef(rng analysis.Range, format string, args ...any) {
	rep.Report(analysis.Diagnostic{Pos: rng.Pos(), End: rng.End(), Message: fmt.Sprintf(format, args...)})
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
