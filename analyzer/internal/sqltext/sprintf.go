package sqltext

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"regexp"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

// wideVerb matches a formatting verb's width or precision of five digits or
// more, which would print a text too large to check.
var wideVerb = regexp.MustCompile(`%[-+# 0]*(\[\d+\])?\d{5,}|%[^%a-zA-Z]*\.\d{5,}`)

// sprintf recovers fmt.Sprintf with a constant format. Arguments that are
// not recoverable print as a placeholder, whatever their verb.
func (t *Texts) sprintf(call *ssa.CallCommon) ([]Text, bool) {
	fn := call.StaticCallee()
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() != "fmt" || fn.Name() != "Sprintf" {
		return nil, false
	}
	format, ok := t.of(call.Args[0])
	if !ok {
		return nil, false
	}
	args, ok := varargs(call.Args[1])
	if !ok {
		return nil, false
	}
	var syntax []ast.Expr
	if ce := t.calls[call.Pos()]; ce != nil && len(ce.Args) == len(args)+1 && !ce.Ellipsis.IsValid() {
		syntax = ce.Args[1:]
	}
	// Each argument is a set of alternatives; the texts are every choice.
	var vals [][]any
	for i, a := range args {
		if mi, ok := a.(*ssa.MakeInterface); ok {
			a = mi.X
		}
		var at ast.Expr
		if syntax != nil {
			at = syntax[i]
		}
		var alts []any
		if c, ok := a.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() != constant.String {
			alts = []any{constant.Val(c.Value)}
		} else if isString(a.Type()) {
			for _, tx := range t.part(a, at) {
				alts = append(alts, tx)
			}
		} else {
			alts = []any{Text{SQL: t.hole(a, at)}}
		}
		vals = append(vals, alts)
	}
	var out []Text
	for _, f := range format {
		if wideVerb.MatchString(f.SQL) {
			return nil, false
		}
		for _, picked := range product(vals) {
			exact := f.Exact
			printed := make([]any, len(picked))
			for i, p := range picked {
				if tx, ok := p.(Text); ok {
					exact = exact && tx.Exact
					printed[i] = tx.SQL
				} else {
					printed[i] = p
				}
			}
			s := fmt.Sprintf(f.SQL, printed...)
			if len(s) > pgsql.MaxLen {
				return nil, false
			}
			out = append(out, Text{SQL: s, Exact: exact})
			if len(out) > maxTexts {
				return nil, false
			}
		}
	}
	return out, true
}

// varargs returns the elements of a variadic argument slice that SSA
// built in place, or false.
func varargs(v ssa.Value) ([]ssa.Value, bool) {
	if c, ok := v.(*ssa.Const); ok && c.IsNil() {
		return nil, true
	}
	s, ok := v.(*ssa.Slice)
	if !ok {
		return nil, false
	}
	alloc, ok := s.X.(*ssa.Alloc)
	if !ok {
		return nil, false
	}
	n := alloc.Type().(*types.Pointer).Elem().(*types.Array).Len()
	elems := make([]ssa.Value, n)
	for _, r := range *alloc.Referrers() {
		ia, ok := r.(*ssa.IndexAddr)
		if !ok {
			continue
		}
		idx, ok := ia.Index.(*ssa.Const)
		if !ok {
			return nil, false
		}
		i, _ := constant.Int64Val(idx.Value)
		for _, rr := range *ia.Referrers() {
			if st, ok := rr.(*ssa.Store); ok && st.Addr == ia {
				elems[i] = st.Val
			}
		}
	}
	for _, e := range elems {
		if e == nil {
			return nil, false
		}
	}
	return elems, true
}

// product returns every choice of one alternative per position.
func product(alts [][]any) [][]any {
	out := [][]any{nil}
	for _, as := range alts {
		var next [][]any
		for _, prefix := range out {
			for _, a := range as {
				next = append(next, append(prefix[:len(prefix):len(prefix)], a))
			}
		}
		out = next
		if len(out) > maxTexts {
			return out[:maxTexts+1]
		}
	}
	return out
}

// join concatenates every text of xs with every text of ys, or reports
// false when a result would be too large to check or there are too many.
func join(xs, ys []Text) ([]Text, bool) {
	if len(xs)*len(ys) > maxAll {
		return nil, false
	}
	var out []Text
	for _, x := range xs {
		for _, y := range ys {
			if len(x.SQL)+len(y.SQL) > pgsql.MaxLen {
				return nil, false
			}
			at := x.At
			if at == nil {
				at = y.At
			}
			out = append(out, Text{SQL: x.SQL + y.SQL, Exact: x.Exact && y.Exact, At: at})
		}
	}
	return out, true
}

func dedupe(ts []Text) []Text {
	seen := make(map[Text]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
