package sqltext

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// part returns the texts of v as a part of a larger text: a placeholder
// naming syntax (the Go expression that v is, or nil) stands in when v is
// not recoverable.
func (t *Texts) part(v ssa.Value, syntax ast.Expr) []Text {
	if ts, ok := t.of(v); ok {
		return ts
	}
	// A parameter of a function whose results are being read stands for
	// the argument of the call: the placeholder names what the caller
	// passed (c.tableName), not the parameter.
	saved := t.frames
	defer func() { t.frames = saved }()
	for {
		p, ok := v.(*ssa.Parameter)
		if !ok {
			break
		}
		call, i, k, ok := t.binding(p)
		if !ok {
			break
		}
		v, syntax = call.Args[i], t.arg(call, i)
		t.frames = slices.Clip(t.frames[:k])
	}
	return []Text{{SQL: t.hole(v, syntax)}}
}

// hole returns the placeholder for v, whose syntax is given or found. Two
// values get the same placeholder when they come from the same place: one
// parameter, one field or one package variable, so that a table held in
// c.tableName is one table in every statement that names it.
func (t *Texts) hole(v ssa.Value, syntax ast.Expr) string {
	name := ""
	if syntax != nil {
		name = types.ExprString(syntax)
	} else {
		name = describe(v)
	}
	if name == "" || len(name) > 60 {
		return placeholder
	}
	key := origin(v)
	n, ok := t.exprNum[key]
	if !ok {
		t.exprs = append(t.exprs, name)
		t.goNames = append(t.goNames, goName(v))
		n = len(t.exprs)
		t.exprNum[key] = n
	}
	return placeholder + "_" + strconv.Itoa(n)
}

// origin returns where v comes from: the field or package variable it is
// loaded from, the accessor whose result it is (l.expName(), a method that
// takes nothing but its receiver: the same column wherever it is named),
// or v itself.
func origin(v ssa.Value) any {
	switch v := v.(type) {
	case *ssa.Call:
		if fn := v.Call.StaticCallee(); fn != nil && fn.Signature.Recv() != nil && len(v.Call.Args) == 1 {
			return fn
		}
	case *ssa.UnOp:
		if v.Op == token.MUL {
			switch a := v.X.(type) {
			case *ssa.FieldAddr:
				if f := fieldOf(a); f != nil {
					return f
				}
			case *ssa.Global:
				return a
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			return st.Field(v.Field)
		}
	}
	return v
}

// goName returns where v is loaded from, as a setting names it: a
// field as pkg/path.Type.Field, a package variable as pkg/path.Var; "" for
// anything else.
func goName(v ssa.Value) string {
	field := func(x types.Type, f *types.Var) string {
		if p, ok := x.(*types.Pointer); ok {
			x = p.Elem()
		}
		n, ok := x.(*types.Named)
		if !ok || f == nil || n.Obj().Pkg() == nil {
			return ""
		}
		return n.Obj().Pkg().Path() + "." + n.Obj().Name() + "." + f.Name()
	}
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.MUL {
			switch a := v.X.(type) {
			case *ssa.FieldAddr:
				return field(a.X.Type(), fieldOf(a))
			case *ssa.Global:
				if a.Pkg != nil {
					return a.Pkg.Pkg.Path() + "." + a.Name()
				}
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			return field(v.X.Type(), st.Field(v.Field))
		}
	}
	return ""
}

// Named returns the placeholders that stand for values loaded from the
// field or package variable that name gives (pkg/path.Type.Field,
// pkg/path.Var), among the texts recovered so far.
func (t *Texts) Named(name string) []string {
	var out []string
	for i, g := range t.goNames {
		if g == name {
			out = append(out, placeholder+"_"+strconv.Itoa(i+1))
		}
	}
	return out
}

// Tables returns the relation names that a table setting matches: the
// table's name as name reads it, or, for a setting that names the Go field
// or variable holding a run-time table name (see [config.GoName]), the
// placeholders of the texts recovered so far that stand for it.
func (t *Texts) Tables(setting string, name func(string) string) []string {
	if config.GoName(setting) {
		return t.Named(setting)
	}
	return []string{name(setting)}
}

// Expr returns the Go expression that the placeholder ident stands for, or
// "" when ident is a placeholder with nothing known of it; false when ident
// is no placeholder.
func (t *Texts) Expr(ident string) (string, bool) {
	rest, ok := strings.CutPrefix(ident, placeholder)
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "_"))
	if err != nil || n < 1 || n > len(t.exprs) {
		return "", false
	}
	return t.exprs[n-1], true
}

// IsPlaceholder reports whether an identifier in a recovered text stands
// for a part that is not constant.
func IsPlaceholder(ident string) bool { return strings.HasPrefix(ident, placeholder) }

// describe names v as Go code would, from its SSA form: a parameter, a
// package variable, a field of one, or a method call on one; "" when it
// has no such name.
func describe(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return describe(v.X)
		}
	case *ssa.FieldAddr:
		if f := fieldOf(v); f != nil {
			if x := describe(v.X); x != "" {
				return x + "." + f.Name()
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			if x := describe(v.X); x != "" {
				return x + "." + st.Field(v.Field).Name()
			}
		}
	case *ssa.Parameter:
		return v.Name()
	case *ssa.FreeVar:
		return v.Name()
	case *ssa.Global:
		return v.Name()
	case *ssa.Call:
		if fn := v.Call.StaticCallee(); fn != nil {
			if fn.Signature.Recv() != nil && len(v.Call.Args) > 0 {
				if x := describe(v.Call.Args[0]); x != "" {
					return x + "." + fn.Name() + "()"
				}
			}
			return fn.Name() + "()"
		}
	}
	return ""
}
