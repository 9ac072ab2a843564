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
