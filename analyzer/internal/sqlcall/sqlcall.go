// Package sqlcall recognises the calls that lease code makes on its
// database: the methods of pgx and database/sql that send a statement, the
// transactions and batches whose statements share one transaction, their
// commits, and the rows affected that a statement's result reports. Known
// driver types are judged by typed tables, keyed by package path, type
// name and method; types of other packages by their shape: methods of the
// same names and signatures on any interface (sqlc's generated DBTX, a
// driver-neutral executor), which is how most lease code reaches its
// database, and a type that commits and rolls back (a Tx interface of the
// application's own, a struct that wraps *sql.Tx). Rules share it;
// functions that pass their parameters into such calls are recognised by
// the clock rule's facts on top of it.
package sqlcall

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

const (
	pgxPath     = "github.com/jackc/pgx/v5"
	pgxpoolPath = "github.com/jackc/pgx/v5/pgxpool"
	pgconnPath  = "github.com/jackc/pgx/v5/pgconn"
	sqlPath     = "database/sql"
	sqlxPath    = "github.com/jmoiron/sqlx"
)

// drivers are the packages whose types the tables alone judge: a method or
// type of theirs that no table lists is not one, whatever its shape.
var drivers = set(pgxPath, pgxpoolPath, pgconnPath, sqlPath, sqlxPath)

// A table maps package path, then type name, to method names.
type table map[string]map[string]map[string]bool

// lists reports whether t lists fn, a method of a named type.
func (t table) lists(fn *types.Func) bool {
	named := typesx.RecvNamed(fn)
	if named == nil || named.Obj().Pkg() == nil {
		return false
	}
	return t[named.Obj().Pkg().Path()][named.Obj().Name()][fn.Name()]
}

// methods lists the methods that execute SQL.
var methods = table{
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
	// sqlx's handles embed database/sql's, whose methods they promote;
	// theirs scan into Go values. Its named queries (NamedExec, :name
	// parameters bound from a struct) are not PostgreSQL that the parser
	// reads, and are left out.
	sqlxPath: {
		"DB":   sqlxSends,
		"Tx":   sqlxSends,
		"Conn": set("GetContext", "SelectContext", "QueryxContext", "QueryRowxContext"),
	},
}

// sqlxSends are the methods of sqlx's DB and Tx that send a statement.
var sqlxSends = set("Get", "GetContext", "Select", "SelectContext", "Queryx", "QueryxContext",
	"QueryRowx", "QueryRowxContext", "MustExec", "MustExecContext")

// transactions maps package path to the types whose statements run in one
// transaction: a transaction, or a batch (one implicit transaction).
var transactions = map[string]map[string]bool{
	pgxPath:     set("Tx", "Batch"),
	pgxpoolPath: set("Tx"),
	sqlPath:     set("Tx"),
	sqlxPath:    set("Tx"),
}

// commits lists the methods that commit a transaction.
var commits = table{
	pgxPath:     {"Tx": set("Commit")},
	pgxpoolPath: {"Tx": set("Commit")},
	sqlPath:     {"Tx": set("Commit")},
}

// rowsAffected lists the methods that return the rows a statement
// affected, on the result of Exec.
var rowsAffected = table{
	pgconnPath: {"CommandTag": set("RowsAffected")},
	sqlPath:    {"Result": set("RowsAffected")},
}

// answers lists the types that carry a database's answer to a statement,
// and the error it may have met: rows, a row, a command tag, a result.
var answers = map[string]map[string]bool{
	pgxPath:    set("Rows", "Row", "BatchResults"),
	pgconnPath: set("CommandTag", "ResultReader", "MultiResultReader"),
	sqlPath:    set("Rows", "Row", "Result"),
	sqlxPath:   set("Rows", "Row"),
}

// shaped are the method names that, on any interface, execute SQL when
// their signature takes the SQL text and then variadic arguments: pgx's
// and database/sql's, and sqlx's (sqlx.ExtContext, a driver-neutral Conn)
// whose Get and Select take the value to scan into before the text.
var shaped = set("Exec", "ExecContext", "Query", "QueryContext", "QueryRow", "QueryRowContext",
	"GetContext", "SelectContext", "Queryx", "QueryxContext", "QueryRowx", "QueryRowxContext")

// scans are the shaped names whose text follows the destination (any).
var scans = set("GetContext", "SelectContext")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// driver reports whether fn is a method of a type of a driver package,
// which the tables alone judge.
func driver(fn *types.Func) bool {
	named := typesx.RecvNamed(fn)
	return named != nil && Driver(named.Obj().Pkg())
}

// Driver reports whether pkg is a database driver's package that the
// rules know by name: pgx, pgxpool, pgconn, database/sql, sqlx.
func Driver(pkg *types.Package) bool {
	return pkg != nil && drivers[pkg.Path()]
}

// Method reports whether fn, a method, executes SQL: a known pgx or
// database/sql method, or a method of an SQL shape declared by an
// interface.
func Method(fn *types.Func) bool {
	t := typesx.Recv(fn)
	if t == nil {
		return false
	}
	if driver(fn) {
		return methods.lists(fn)
	}
	if !types.IsInterface(t) || !shaped[fn.Name()] {
		return false
	}
	sig := fn.Signature()
	i := SQLParam(sig)
	if i < 0 || !sig.Variadic() {
		return false
	}
	if scans[fn.Name()] {
		// GetContext(ctx, dest any, query string, args ...any), not a
		// store's GetContext(ctx, key string, opts ...Option).
		dest, ok := types.Unalias(sig.Params().At(max(i-1, 0)).Type()).Underlying().(*types.Interface)
		return i > 0 && ok && dest.Empty()
	}
	return true
}

// Sends reports whether fn, a method of an interface that a setting or a
// directive says executes SQL, may send a statement by its signature: it
// has [Method]'s shape, takes a context, or returns an error or a
// database's answer (pgx's rows or row, a command tag, database/sql's
// rows, row or result), as a call that reaches a database does, since one
// blocks and may fail. A method that does none of these, such as Now() of
// a clock the interface embeds or Name() string, reads no database,
// whichever interface declares it.
func Sends(fn *types.Func) bool {
	if Method(fn) {
		return true
	}
	sig := fn.Signature()
	for i := range sig.Params().Len() {
		if typesx.IsNamed(sig.Params().At(i).Type(), "context", "Context") {
			return true
		}
	}
	for i := range sig.Results().Len() {
		t := sig.Results().At(i).Type()
		if types.Identical(t, types.Universe.Lookup("error").Type()) || answer(t) {
			return true
		}
	}
	return false
}

// answer reports whether t is a database's answer: pgx's rows or row, a
// command tag, database/sql's rows, row or result.
func answer(t types.Type) bool {
	named, ok := types.Unalias(typesx.Deref(t)).(*types.Named)
	return ok && named.Obj().Pkg() != nil && answers[named.Obj().Pkg().Path()][named.Obj().Name()]
}

// Database reports whether iface is a handle on a database by its own
// methods, whatever it is called: one of them takes SQL text and its
// arguments ([Method]'s shape: a driver's Executor with a raw Exec),
// returns a database's answer (a repository whose writes return
// sql.Result), or takes a database handle to run on (a query interface
// whose methods take the session or transaction, or an interface that is
// a handle by either of the first two: River's riverpilot.Pilot, given a
// riverdriver.ExecutorTx). The methods of such an interface that [Sends]
// are taken to send SQL. because says which method shows it, and how; ""
// when none does.
func Database(iface *types.Interface) (because string, ok bool) {
	return database(iface, true)
}

// database is [Database]; takes says whether a method that takes a
// handle, or an interface that is one, shows it.
func database(iface *types.Interface, takes bool) (because string, ok bool) {
	for i := range iface.NumMethods() {
		m := iface.Method(i)
		if Method(m) {
			return "its method " + m.Name() + " takes SQL text and its arguments", true
		}
		res := m.Signature().Results()
		for j := range res.Len() {
			if answer(res.At(j).Type()) {
				return "its method " + m.Name() + " returns " + types.TypeString(res.At(j).Type(), (*types.Package).Name) + ", a database's answer", true
			}
		}
		if !takes {
			continue
		}
		params := m.Signature().Params()
		for j := range params.Len() {
			t := params.At(j).Type()
			if handle(t) {
				return "its method " + m.Name() + " takes " + types.TypeString(t, (*types.Package).Name) + ", a database handle", true
			}
			if other, ok := t.Underlying().(*types.Interface); ok && other != iface {
				if _, ok := database(other, false); ok {
					return "its method " + m.Name() + " takes " + types.TypeString(t, (*types.Package).Name) + ", a database handle by its own methods", true
				}
			}
		}
	}
	return "", false
}

// handles are the types of a connection, pool, transaction or session.
var handles = map[string]map[string]bool{
	pgxPath:     set("Conn", "Tx"),
	pgxpoolPath: set("Pool", "Conn", "Tx"),
	sqlPath:     set("DB", "Tx", "Conn"),
	sqlxPath:    set("DB", "Tx", "Conn"),
	upperPath:   set("Session"),
}

// upperPath is upper/db, whose Session runs the statements its builder
// chains make.
const upperPath = "github.com/upper/db/v4"

// handle reports whether t is a database handle (see handles).
func handle(t types.Type) bool {
	named, ok := types.Unalias(typesx.Deref(t)).(*types.Named)
	return ok && named.Obj().Pkg() != nil && handles[named.Obj().Pkg().Path()][named.Obj().Name()]
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

// Transaction reports whether t, or what it points to, runs its statements
// in one transaction: pgx.Tx, pgxpool.Tx, *sql.Tx, a pgx.Batch; or a named
// type of another package that commits and rolls back (see [Commit]), such
// as an application's Tx interface or a struct that embeds *sql.Tx. A type
// that only executes SQL (sqlc's DBTX, an interface that a pool satisfies
// as well) is not one, whatever its name.
func Transaction(t types.Type) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	if path := named.Obj().Pkg().Path(); drivers[path] {
		return transactions[path][named.Obj().Name()]
	}
	return endsTx(named, "Commit") && endsTx(named, "Rollback")
}

// endsTx reports whether named has a method called name (on T or *T) of
// the shape that ends a transaction (see [endsShape]).
func endsTx(named *types.Named, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(named, true, nil, name)
	fn, ok := obj.(*types.Func)
	return ok && endsShape(fn.Signature())
}

// endsShape reports whether sig is that of a method that commits or rolls
// back: it takes nothing or a context, and returns only an error.
func endsShape(sig *types.Signature) bool {
	params, results := sig.Params(), sig.Results()
	if params.Len() > 1 || params.Len() == 1 && !typesx.IsNamed(params.At(0).Type(), "context", "Context") {
		return false
	}
	return results.Len() == 1 && types.Identical(results.At(0).Type(), types.Universe.Lookup("error").Type())
}

// Commit reports whether fn commits a transaction: Commit of pgx.Tx,
// pgxpool.Tx or *sql.Tx, or a method Commit of another package's type
// that takes nothing or a context and returns only an error.
func Commit(fn *types.Func) bool {
	if driver(fn) {
		return commits.lists(fn)
	}
	return fn.Name() == "Commit" && fn.Signature().Recv() != nil && endsShape(fn.Signature())
}

// RowsAffected reports whether fn returns the rows that a statement
// affected: RowsAffected of pgconn.CommandTag or sql.Result, or a method
// RowsAffected of another package's type (a result that wraps one, an
// interface that it is passed as) that takes nothing and returns an
// integer first.
func RowsAffected(fn *types.Func) bool {
	if driver(fn) {
		return rowsAffected.lists(fn)
	}
	sig := fn.Signature()
	if fn.Name() != "RowsAffected" || sig.Recv() == nil || sig.Params().Len() != 0 || sig.Results().Len() == 0 {
		return false
	}
	b, ok := sig.Results().At(0).Type().Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
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
