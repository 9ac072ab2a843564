package lease

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"

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

func parseAllow(pass *analysis.Pass, c *ast.Comment, known map[string]bool) *allow {
	bad := func(format string, args ...any) {
		pass.Report(analysis.Diagnostic{Pos: c.Pos(), End: c.End(), Category: Name, Message: fmt.Sprintf(format, args...)})
	}
	// //leaseguard:allow RULE[,RULE...] -- reason
	fields := strings.Fields(strings.TrimPrefix(c.Text, allowDirective))
	if len(fields) == 0 || fields[0] == "--" {
		bad("//leaseguard:allow names no rule: want //leaseguard:allow RULE -- reason")
		return nil
	}
	names := fields[0]
	var rules []string
	for r := range strings.SplitSeq(names, ",") {
		if !known[r] {
			bad("//leaseguard:allow names unknown rule %q (rules: %s)", r, ruleList(known))
			return nil
		}
		rules = append(rules, r)
	}
	switch {
	case len(fields) == 1 || (fields[1] == "--" && len(fields) == 2):
		bad("//leaseguard:allow %s gives no reason: add -- and say why the finding is safe here", names)
		return nil
	case fields[1] != "--":
		bad("//leaseguard:allow %s: want //leaseguard:allow RULE -- reason", names)
		return nil
	}
	pos := pass.Fset.Position(c.Pos())
	line := pos.Line
	if ownLine(pass, pos) {
		line++
	}
	return &allow{comment: c, file: pos.Filename, line: line, rules: rules}
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

// Reporter reports one rule's diagnostics in a package, dropping those that
// a //leaseguard:allow for the rule suppresses. Each rule makes its own, so
// that rules running in parallel share no state.
type Reporter struct {
	pass *analysis.Pass
	rule string
	used map[*allow]bool
	res  *Result
}

// Reporter returns a Reporter for rule in pass's package.
func (r *Result) Reporter(pass *analysis.Pass, rule string) *Reporter {
	return &Reporter{pass: pass, rule: rule, used: make(map[*allow]bool), res: r}
}

// Report reports d under the rule's category, unless it is suppressed.
func (rep *Reporter) Report(d analysis.Diagnostic) {
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
