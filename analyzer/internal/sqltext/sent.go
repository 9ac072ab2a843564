package sqltext

// This file finds what an SQL call sends: its text, read through the
// functions that pass it on and the names that statements are prepared
// under, and the parameters that the code fills with values of its own.

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
)

// Sent returns what call sends: the SQL method it calls (see
// [sqlcall.Executes]) and the texts of its SQL argument, or the builder
// method that sends a chain and the chain's statement (see [Texts.Built]).
// It reports false for a call that sends no SQL text, or whose text is not
// recoverable. A call whose text is a parameter of its function (see
// [Texts.Forwarder]) sends what those of the package's own calls of the
// function that can be read pass, whatever its other callers pass.
func (t *Texts) Sent(call *ssa.CallCommon) (*types.Func, []Text, bool) {
	if m := sqlcall.Executes(call); m != nil {
		v := sqlcall.Text(call, m)
		if v == nil {
			return nil, nil, false
		}
		ts, ok := t.Of(v)
		if !ok {
			if p := forwarded(v); p != nil {
				ts, ok = t.passed(p, true)
			}
		}
		if ok {
			ts, ok = t.named(ts)
		}
		return m, ts, ok
	}
	if tx, ok := t.Built(call); ok {
		return call.Method, []Text{tx}, true
	}
	return nil, nil, false
}

// ConstArgs returns, for call, an SQL method's call (see
// [sqlcall.Executes]) whose arguments follow its text, the positional
// parameters ($1 is 1) that it fills with a value the code names itself:
// a constant, by its value, or a package variable, by its name
// (model.StatusPending): a status the code chose, not a value its caller
// gave.
func ConstArgs(call *ssa.CallCommon, m *types.Func) map[int]string {
	i := sqlcall.SQLParam(m.Signature())
	args := sqlcall.Args(call)
	if i < 0 || !m.Signature().Variadic() || len(args) != i+2 {
		return nil
	}
	vals, ok := varargs(args[i+1])
	if !ok {
		return nil
	}
	out := make(map[int]string)
	for k, v := range vals {
		switch x := unwrap(v).(type) {
		case *ssa.Const:
			if x.Value != nil {
				out[k+1] = x.Value.ExactString()
			}
		case *ssa.UnOp:
			if g, ok := x.X.(*ssa.Global); ok && x.Op == token.MUL {
				out[k+1] = g.RelString(nil)
			}
		}
	}
	return out
}

// named replaces each text in ts that is the name of a statement that the
// package prepares (pgx runs the statement prepared under that name when
// it is given one as its SQL) with the prepared statement's texts,
// reported at the Prepare call's SQL argument. It reports false when a
// prepared statement's text is not recoverable.
func (t *Texts) named(ts []Text) ([]Text, bool) {
	var out []Text
	for _, tx := range ts {
		calls := t.prepares[tx.SQL]
		if !tx.Exact || len(calls) == 0 {
			out = append(out, tx)
			continue
		}
		for _, call := range calls {
			sql, ok := t.of(sqlcall.Args(call)[2])
			if !ok {
				return nil, false
			}
			at := t.Arg(call.Pos(), 2)
			for _, s := range sql {
				if s.At == nil {
					s.At = at
				}
				out = append(out, s)
			}
		}
	}
	return out, true
}

// prepares reports whether call prepares a statement under a constant
// name, as pgx's Conn.Prepare(ctx, name, sql) does, and the name.
func prepares(call *ssa.CallCommon) (string, bool) {
	fn := sqlcall.Callee(call)
	if fn == nil || fn.Name() != "Prepare" {
		return "", false
	}
	sig := fn.Signature()
	if sig.Recv() == nil || sig.Params().Len() != 3 || !isString(sig.Params().At(1).Type()) || !isString(sig.Params().At(2).Type()) {
		return "", false
	}
	return constString(unwrap(sqlcall.Args(call)[1]))
}

// A Forward is an SQL call whose text is a parameter of the function
// that makes the call: the function passes on SQL that its callers choose
// (an adapter's Exec, a helper that runs the query it is given).
type Forward struct {
	Param *ssa.Parameter
	// Calls is the number of the package's own calls of the function,
	// and Missed the positions of those whose text is not recoverable.
	Calls  int
	Missed []token.Pos
	// Outside reports that the function may have callers out of this
	// package's sight: it is exported, or called through an interface or
	// as a value.
	Outside bool
}

// Forwarder reports whether call, an SQL method's call, sends a
// parameter of its function as its text (see [Forward]).
func (t *Texts) Forwarder(call *ssa.CallCommon) (Forward, bool) {
	m := sqlcall.Executes(call)
	if m == nil {
		return Forward{}, false
	}
	v := sqlcall.Text(call, m)
	if v == nil {
		return Forward{}, false
	}
	p := forwarded(v)
	if p == nil {
		return Forward{}, false
	}
	fn := p.Parent()
	fw := Forward{
		Param:   p,
		Calls:   len(t.callers[fn]),
		Outside: fn.Object() == nil || fn.Object().Exported() || t.escaped[fn],
	}
	i := slices.Index(fn.Params, p)
	for _, c := range t.callers[fn] {
		if _, ok := t.of(c.Args[i]); !ok {
			fw.Missed = append(fw.Missed, c.Pos())
		}
	}
	return fw, true
}

// forwarded returns the parameter that v, a text, is, or nil.
func forwarded(v ssa.Value) *ssa.Parameter {
	for {
		switch x := v.(type) {
		case *ssa.Parameter:
			return x
		case *ssa.ChangeType:
			v = x.X
		case *ssa.Convert:
			if !isString(x.X.Type()) {
				return nil
			}
			v = x.X
		default:
			return nil
		}
	}
}
