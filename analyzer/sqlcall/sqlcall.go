// Package sqlcall recognises calls that execute SQL: the methods of pgx and
// database/sql that send a statement, and methods of the same names and
// shapes on any interface (sqlc's generated DBTX, a driver-neutral
// executor), which is how most lease code reaches its database. Rules share
// it; functions that pass their parameters into such calls are recognised
// by the clock rule's facts on top of it.
package sqlcall

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

const (
	pgxPath     = "github.com/jackc/pgx/v5"
	pgxpoolPath = "github.com/jackc/pgx/v5/pgxpool"
	sqlPath     = "database/sql"
)

// methods maps package path, then receiver type name, to the methods that
// execute SQL.
var methods = map[string]map[string]map[string]bool{
	pgxPath: {
		"Conn":  set("Exec", "Query", "QueryRow", "SendBatch", "CopyFrom"),
		"Tx":    set("Exec", "Query", "QueryRow", "SendBatch", "CopyFrom"),
		"Batch": set("Queue"),
	},
	pgxpoolPath: {
		"Pool": set("Exec", "Query", "QueryRow", "SendBatch", "CopyFrom"),
		"Conn": set("Exec", "Query", "QueryRow", "SendBatch", "CopyFrom"),
		"Tx":   set("Exec", "Query", "QueryRow", "SendBatch", "CopyFrom"),
	},
	sqlPath: {
		"DB":   set("Exec", "ExecContext", "Query", "QueryContext", "QueryRow", "QueryRowContext"),
		"Tx":   set("Exec", "ExecContext", "Query", "QueryContext", "QueryRow", "QueryRowContext"),
		"Conn": set("ExecContext", "QueryContext", "QueryRowContext"),
		"Stmt": set("Exec", "ExecContext", "Query", "QueryContext", "QueryRow", "QueryRowContext"),
	},
}

// shaped are the method names that, on any interface, execute SQL when
// their signature takes the SQL text and then variadic arguments.
var shaped = set("Exec", "ExecContext", "Query", "QueryContext", "QueryRow", "QueryRowContext")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Method reports whether fn, a method, executes SQL: a known pgx or
// database/sql method, or a method of an SQL shape declared by an
// interface.
func Method(fn *types.Func) bool {
	t := typesx.Recv(fn)
	if t == nil {
		return false
	}
	if named, ok := t.(*types.Named); ok && named.Obj().Pkg() != nil {
		if byType := methods[named.Obj().Pkg().Path()]; byType != nil {
			return byType[named.Obj().Name()][fn.Name()]
		}
	}
	if !types.IsInterface(t) || !shaped[fn.Name()] {
		return false
	}
	return SQLParam(fn.Signature()) >= 0 && fn.Signature().Variadic()
}

// SQLParam returns the index of sig's SQL text parameter (the first string
// parameter), or -1.
func SQLParam(sig *types.Signature) int {
	for i := range sig.Params().Len() {
		if b, ok := sig.Params().At(i).Type().Underlying().(*types.Basic); ok && b.Kind() == types.String {
			return i
		}
	}
	return -1
}

// Callee returns the function or method that call calls: its static
// callee, or the interface method of a call in invoke mode; nil for a call
// of a function value, of a function literal or of a builtin.
func Callee(call *ssa.CallCommon) *types.Func {
	if call.IsInvoke() {
		return call.Method
	}
	if f := call.StaticCallee(); f != nil {
		fn, _ := f.Object().(*types.Func)
		return fn
	}
	return nil
}

// Executes returns the method that call invokes, if it is one that
// executes SQL (see [Method]), or nil.
func Executes(call *ssa.CallCommon) *types.Func {
	fn := Callee(call)
	if fn == nil || !Method(fn) {
		return nil
	}
	return fn
}

// Args returns call's arguments without the receiver of a static method
// call, so that they line up with the method's declared parameters.
func Args(call *ssa.CallCommon) []ssa.Value {
	if !call.IsInvoke() && call.Signature().Recv() != nil {
		return call.Args[1:]
	}
	return call.Args
}

// Receiver returns the value that call runs on: the interface value of an
// invocation, or a static method call's receiver; nil for a function call.
func Receiver(call *ssa.CallCommon) ssa.Value {
	switch {
	case call.IsInvoke():
		return call.Value
	case call.Signature().Recv() != nil:
		return call.Args[0]
	}
	return nil
}

// Text returns the argument of call, a call of m (see [Executes]), that
// carries the SQL text, or nil when m takes none (a prepared statement's
// Exec, SendBatch, CopyFrom).
func Text(call *ssa.CallCommon, m *types.Func) ssa.Value {
	i := SQLParam(m.Signature())
	if i < 0 {
		return nil
	}
	return Args(call)[i]
}
