package sqltext

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// upperDB is the import path of upper/db, the query builder whose chains
// are recovered: sess.SQL().Update(cfg.Table).Set("expires_at", t).
// Where(db.Cond{"holder": h}).Exec() sends
//
//	UPDATE <the table named by cfg.Table> SET expires_at = @t WHERE holder = @h
//
// Values are written as pgx named arguments, named by the Go expression
// that gave them, so that a message can say which one it means.
const upperDB = "github.com/upper/db/v4"

// builderSends are the methods, by receiver interface and name, that send
// the statement that their builder holds.
var builderSends = map[string]bool{
	"SQLExecer.Exec": true, "SQLExecer.ExecContext": true,
	"SQLGetter.Query": true, "SQLGetter.QueryContext": true, "SQLGetter.QueryRow": true, "SQLGetter.QueryRowContext": true,
	"Selector.One": true, "Selector.All": true, "Selector.Iterator": true, "Selector.IteratorContext": true,
	"Inserter.Iterator": true, "Inserter.IteratorContext": true,
	"ResultMapper.One": true, "ResultMapper.All": true,
	"Collection.Insert": true, "Collection.InsertReturning": true,
	"Result.Update": true, "Result.Delete": true, "Result.One": true, "Result.All": true,
	"Result.Count": true, "Result.Exists": true,
}

// BuilderCall reports whether call is a method of upper/db's query
// builder, and whether it sends the statement (Exec, One, a collection's
// Insert) rather than adding to it. The arguments of every such call
// become parts of a statement.
func BuilderCall(call *ssa.CallCommon) (m *types.Func, sends, ok bool) {
	if !call.IsInvoke() || !BuilderMethod(call.Method) {
		return nil, false, false
	}
	return call.Method, builderSends[builderKey(call.Method)], true
}

// BuilderMethod reports whether fn is a method of a query builder whose
// chains [Texts.Built] recovers.
func BuilderMethod(fn *types.Func) bool {
	return fn.Pkg() != nil && fn.Pkg().Path() == upperDB && fn.Signature().Recv() != nil
}

// builderKey names m as Interface.Method.
func builderKey(m *types.Func) string {
	if n := typesx.RecvNamed(m); n != nil {
		return n.Obj().Name() + "." + m.Name()
	}
	return m.Name()
}

// built is a statement being recovered from a builder chain.
type built struct {
	t       *Texts
	verb    string // SELECT, INSERT, UPDATE or DELETE
	table   string
	exact   bool
	cols    []string
	sets    []string
	values  []string
	conds   []string
	unnamed int // values with no Go name: @arg1, @arg2, …
}

// Built returns the statement that call, a builder method that sends it
// (see [BuilderCall]), sends: recovered from the chain of builder calls
// that made its receiver, each step known. At is the whole chain, where
// the user wrote the statement. A chain that goes through a variable
// assigned on two paths, or a step that is not understood, is not
// recovered.
func (t *Texts) Built(call *ssa.CallCommon) (Text, bool) {
	m, sends, ok := BuilderCall(call)
	if !ok || !sends {
		return Text{}, false
	}
	b := &built{t: t, exact: true}
	if !b.chain(call.Value) {
		return Text{}, false
	}
	switch builderKey(m) {
	case "Collection.Insert", "Collection.InsertReturning":
		if len(call.Args) != 1 || !b.record(call.Args[0]) {
			return Text{}, false
		}
		b.verb = "INSERT"
	case "Result.Update":
		if len(call.Args) != 1 || !b.record(call.Args[0]) {
			return Text{}, false
		}
		b.verb = "UPDATE"
		for i, c := range b.cols {
			b.sets = append(b.sets, c+" = "+b.values[i])
		}
	case "Result.Delete":
		b.verb = "DELETE"
	case "Result.One", "Result.All", "Result.Count", "Result.Exists":
		b.verb = "SELECT"
	}
	sql, ok := b.sql()
	if !ok {
		return Text{}, false
	}
	return Text{SQL: sql, Exact: b.exact, At: t.calls[call.Pos()]}, true
}

// chain applies the builder calls that made v, first to last.
func (b *built) chain(v ssa.Value) bool {
	var steps []*ssa.CallCommon
	for {
		c, ok := v.(*ssa.Call)
		if !ok {
			return false
		}
		m, _, ok := BuilderCall(&c.Call)
		if !ok {
			return false
		}
		steps = append(steps, &c.Call)
		if m.Name() == "SQL" || m.Name() == "Collection" {
			break // the chain's start
		}
		v = c.Call.Value
	}
	slices.Reverse(steps)
	for _, s := range steps {
		if !b.step(s) {
			return false
		}
	}
	return true
}

// step applies one builder call.
func (b *built) step(call *ssa.CallCommon) bool {
	args := call.Args
	switch builderKey(call.Method) {
	case "Session.SQL", "SQL.SQL":
		return len(args) == 0
	case "Session.Collection":
		b.verb = "SELECT"
		return len(args) == 1 && b.setTable(args[0])
	case "SQL.Select":
		b.verb = "SELECT"
		return b.columns(args)
	case "SQL.SelectFrom":
		b.verb = "SELECT"
		return b.tables(args)
	case "Selector.From":
		return b.tables(args)
	case "Selector.Columns", "Inserter.Columns":
		return b.columns(args)
	case "SQL.Update":
		b.verb = "UPDATE"
		return b.setTable(args[0])
	case "SQL.DeleteFrom":
		b.verb = "DELETE"
		return b.setTable(args[0])
	case "SQL.InsertInto":
		b.verb = "INSERT"
		return b.setTable(args[0])
	case "Updater.Set":
		return b.set(args)
	case "Inserter.Values":
		vals, ok := varargs(args[0])
		if !ok {
			return false
		}
		for _, v := range vals {
			b.values = append(b.values, b.value(v))
		}
		return true
	case "Selector.Where", "Updater.Where", "Deleter.Where", "Collection.Find":
		b.conds = nil
		return b.where(args)
	case "Selector.And", "Updater.And", "Deleter.And", "Result.And":
		return b.where(args)
	case "Selector.OrderBy", "Selector.Limit", "Selector.Offset", "Result.OrderBy", "Result.Limit", "Result.Offset",
		"Updater.Limit", "Deleter.Limit", "Inserter.Returning":
		return true // nothing a rule reads
	}
	// Anything else (Amend, which rewrites the statement as a function
	// likes; a method of a later version) makes a statement the chain does
	// not spell: it is not read.
	return false
}

// setTable sets the statement's table from v, a string.
func (b *built) setTable(v ssa.Value) bool {
	ts := b.t.part(v, nil)
	if len(ts) != 1 {
		return false
	}
	b.table = ts[0].SQL
	b.exact = b.exact && ts[0].Exact
	return true
}

// tables sets the table of a variadic list of one string.
func (b *built) tables(arg []ssa.Value) bool {
	vals, ok := varargs(arg[0])
	if !ok || len(vals) != 1 {
		return false
	}
	return b.setTable(unwrap(vals[0]))
}

// columns adds the constant column names of a variadic list.
func (b *built) columns(arg []ssa.Value) bool {
	vals, ok := varargs(arg[0])
	if !ok {
		return false
	}
	for _, v := range vals {
		s, ok := constString(unwrap(v))
		if !ok {
			return false
		}
		b.cols = append(b.cols, s)
	}
	return true
}

// set adds Set's column and value pairs: Set("col", v, "col2", w).
func (b *built) set(arg []ssa.Value) bool {
	vals, ok := varargs(arg[0])
	if !ok || len(vals)%2 != 0 {
		return false
	}
	for i := 0; i < len(vals); i += 2 {
		col, ok := constString(unwrap(vals[i]))
		if !ok || strings.ContainsAny(col, " =?") {
			return false
		}
		b.sets = append(b.sets, col+" = "+b.value(vals[i+1]))
	}
	return true
}

// where adds the conditions of Where or And: db.Cond maps of constant
// keys ("col" or "col op"), or a constant text with ? for its arguments.
func (b *built) where(arg []ssa.Value) bool {
	vals, ok := varargs(arg[len(arg)-1])
	if !ok {
		return false
	}
	if len(vals) > 0 {
		if s, ok := constString(unwrap(vals[0])); ok {
			parts := strings.Split(s, "?")
			if len(parts) != len(vals) {
				return false
			}
			var sb strings.Builder
			for i, p := range parts {
				sb.WriteString(p)
				if i+1 < len(parts) {
					sb.WriteString(b.value(vals[i+1]))
				}
			}
			b.conds = append(b.conds, "("+sb.String()+")")
			return true
		}
	}
	for _, v := range vals {
		mk, ok := unwrap(v).(*ssa.MakeMap)
		if !ok {
			return false
		}
		for _, r := range *mk.Referrers() {
			up, ok := r.(*ssa.MapUpdate)
			if !ok || up.Map != mk {
				continue
			}
			key, ok := constString(unwrap(up.Key))
			if !ok {
				return false
			}
			col, op, _ := strings.Cut(strings.TrimSpace(key), " ")
			if op == "" {
				op = "="
			}
			b.conds = append(b.conds, col+" "+op+" "+b.value(up.Value))
		}
	}
	return true
}
