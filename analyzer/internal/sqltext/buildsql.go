package sqltext

// This file writes what a builder chain holds as the SQL it sends: values
// as literals, subqueries or named arguments, struct records by their db
// tags.

import (
	"go/constant"
	"go/types"
	"reflect"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// record adds the columns and values of a struct (or a pointer to one)
// that upper/db maps by its db tags.
func (b *built) record(v ssa.Value) bool {
	x := unwrap(v)
	st, ok := typesx.Deref(x.Type()).Underlying().(*types.Struct)
	if !ok {
		return false
	}
	stored := make(map[int]ssa.Value)
	if alloc, ok := x.(*ssa.Alloc); ok {
		for _, r := range *alloc.Referrers() {
			if fa, ok := r.(*ssa.FieldAddr); ok {
				for _, rr := range *fa.Referrers() {
					if s, ok := rr.(*ssa.Store); ok && s.Addr == fa {
						stored[fa.Field] = s.Val
					}
				}
			}
		}
	}
	for i := range st.NumFields() {
		name, _, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("db"), ",")
		if name == "" || name == "-" {
			continue
		}
		b.cols = append(b.cols, name)
		if sv, ok := stored[i]; ok {
			b.values = append(b.values, b.value(sv))
		} else {
			b.values = append(b.values, "@"+st.Field(i).Name())
		}
	}
	return len(b.cols) > 0
}

// value writes v as SQL: a constant as a literal, a builder's SELECT as a
// subquery, anything else as a named argument.
func (b *built) value(v ssa.Value) string {
	x := unwrap(v)
	if c, ok := x.(*ssa.Const); ok && c.Value != nil {
		switch c.Value.Kind() {
		case constant.Bool:
			return strconv.FormatBool(constant.BoolVal(c.Value))
		case constant.Int, constant.Float:
			return c.Value.ExactString()
		case constant.String:
			return "'" + strings.ReplaceAll(constant.StringVal(c.Value), "'", "''") + "'"
		}
	}
	if c, ok := x.(*ssa.Call); ok {
		if raw, ok := rawSQL(&c.Call); ok {
			return raw
		}
		if _, _, ok := BuilderCall(&c.Call); ok {
			sub := &built{t: b.t, exact: true}
			if sub.chain(c) && sub.verb == "SELECT" {
				if sql, ok := sub.sql(); ok {
					b.exact = b.exact && sub.exact
					return "(" + sql + ")"
				}
			}
		}
	}
	if name := describe(x); name != "" && !strings.ContainsAny(name, ".()") {
		return "@" + name
	}
	b.unnamed++
	return "@arg" + strconv.Itoa(b.unnamed)
}

// rawSQL returns the SQL of db.Raw("…") with a constant text and no
// arguments.
func rawSQL(call *ssa.CallCommon) (string, bool) {
	fn := call.StaticCallee()
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() != upperDB || fn.Name() != "Raw" || len(call.Args) != 2 {
		return "", false
	}
	if rest, ok := varargs(call.Args[1]); !ok || len(rest) > 0 {
		return "", false
	}
	return constString(call.Args[0])
}

// sql writes the statement.
func (b *built) sql() (string, bool) {
	if b.table == "" {
		return "", false
	}
	var sb strings.Builder
	where := func() {
		if len(b.conds) > 0 {
			sb.WriteString(" WHERE " + strings.Join(b.conds, " AND "))
		}
	}
	switch b.verb {
	case "SELECT":
		cols := "*"
		if len(b.cols) > 0 {
			cols = strings.Join(b.cols, ", ")
		}
		sb.WriteString("SELECT " + cols + " FROM " + b.table)
		where()
	case "UPDATE":
		if len(b.sets) == 0 {
			return "", false
		}
		sb.WriteString("UPDATE " + b.table + " SET " + strings.Join(b.sets, ", "))
		where()
	case "DELETE":
		sb.WriteString("DELETE FROM " + b.table)
		where()
	case "INSERT":
		if len(b.cols) == 0 || len(b.cols) != len(b.values) {
			return "", false
		}
		sb.WriteString("INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES (" + strings.Join(b.values, ", ") + ")")
	default:
		return "", false
	}
	return sb.String(), true
}

// unwrap returns the value that v, converted to an interface, holds.
func unwrap(v ssa.Value) ssa.Value {
	for {
		switch x := v.(type) {
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.ChangeInterface: // a builder held in a variable of its own interface type
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		default:
			return v
		}
	}
}

// constString returns v's value when it is a string constant.
func constString(v ssa.Value) (string, bool) {
	c, ok := v.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(c.Value), true
}
