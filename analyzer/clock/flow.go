package clock

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
	"github.com/leaseguard/leaseguard/analyzer/sqlcall"
)

var errorType = types.Universe.Lookup("error").Type()

const why = ": the database clock must decide, not the process clock"

// flow is the dataflow over one function.
type flow struct {
	c    *checker
	fn   *ssa.Function
	vals map[ssa.Value]labelled

	sql       bool
	params    uint64
	returns   *source
	results   uint64                      // parameters (then free variables) that the results derive from
	sqlBlocks map[*ssa.BasicBlock]sqlCall // blocks that run SQL, and their first SQL call
	structs   map[ssa.Value]labelled      // structs, what their fields were stored from
	found     map[finding]bool
}

// sqlCall is a call that runs SQL: its name for messages, and where it is.
type sqlCall struct {
	name string
	pos  token.Pos
}

func (f *flow) get(v ssa.Value, at ssa.Instruction) labelled {
	if fn, ok := v.(*ssa.Function); ok {
		if desc, ok := f.c.clockFunc(fn.Object()); ok {
			return labelled{l: clockFunc, srcs: sources{{pos: at.Pos(), desc: desc, fn: true}}}
		}
	}
	return f.vals[v]
}

// set widens v's labels by l and reports whether they changed. An error
// carries no clock value: a time in an error message decides nothing.
func (f *flow) set(v ssa.Value, l labelled) bool {
	if types.Identical(v.Type(), errorType) {
		l = labelled{l: l.l &^ clockBits}
	}
	cur := f.vals[v]
	next := union(cur, l)
	if !grew(cur, next) {
		return false
	}
	f.vals[v] = next
	return true
}

// grew reports whether next, a union with cur, has more than cur.
func grew(cur, next labelled) bool {
	return next.l != cur.l || len(next.srcs) != len(cur.srcs)
}

// step applies instr and reports whether any label changed.
func (f *flow) step(instr ssa.Instruction) bool {
	switch in := instr.(type) {
	case *ssa.Store:
		val := f.get(in.Val, in)
		if _, ok := in.Addr.(*ssa.IndexAddr); ok {
			// A struct put in a slice or array: the slice carries what its
			// fields hold (append(params.Jobs, &Job{UpdatedAt: now})).
			val = union(val, f.fieldsOf(in.Val))
		}
		changed := f.store(in.Addr, in.Val, val)
		// A variable that holds a struct, or a pointer to one, holds what
		// the struct's fields were set from: a function literal may
		// capture the variable, not the struct.
		if _, ok := in.Addr.(*ssa.Alloc); ok {
			if fields := f.fieldsOf(in.Val); fields.l != 0 {
				changed = f.addFields(in.Addr, fields) || changed
			}
		}
		return changed
	case *ssa.MapUpdate:
		return f.set(in.Map, union(f.get(in.Key, in), f.get(in.Value, in)))
	case *ssa.Send:
		return f.set(in.Chan, f.get(in.X, in))
	case ssa.CallInstruction:
		return f.call(in)
	case *ssa.MakeClosure:
		fn := in.Fn.(*ssa.Function)
		for i, b := range in.Bindings {
			l := f.get(b, in)
			l.l &= clockBits // a free variable is not a parameter of the closure
			widen(f.c, f.c.frees, fn.FreeVars[i], l)
		}
		return false
	case *ssa.UnOp:
		if in.Op == token.MUL {
			return f.set(in, f.load(in.X))
		}
	case *ssa.Field:
		return f.set(in, union(f.get(in.X, in), f.c.field(fieldKey{structOf(in.X.Type()), in.Field})))
	case *ssa.Return:
		for _, r := range in.Results {
			l := f.get(r, in)
			// A struct returned carries the parameters its fields were
			// set from (a constructor); its clock, as in an argument, only
			// when set in the caller (see clock/limitations).
			f.results |= uint64(union(l, f.fieldsOf(r)).l & paramBits)
			if l.l&clockRead != 0 && f.returns == nil {
				if reads := l.reads(); len(reads) > 0 {
					f.returns = &reads[0]
				}
			}
		}
		return false
	}
	v, ok := instr.(ssa.Value)
	if !ok {
		return false
	}
	var l labelled
	for _, op := range instr.Operands(nil) {
		if *op != nil {
			l = union(l, f.get(*op, instr))
		}
	}
	return f.set(v, l)
}

func union(a, b labelled) labelled {
	return labelled{l: a.l | b.l, srcs: a.srcs.union(b.srcs)}
}

// reads returns the clock reads that l derives from, without the
// functions that read the clock passed as values.
func (l labelled) reads() sources {
	if !slices.ContainsFunc(l.srcs, func(s source) bool { return s.fn }) {
		return l.srcs
	}
	return slices.DeleteFunc(slices.Clone(l.srcs), func(s source) bool { return s.fn })
}

// store records that v, labelled val, was stored at addr: in the local
// variable, array or slice it belongs to, or package-wide for a field or
// a global.
func (f *flow) store(addr, v ssa.Value, val labelled) bool {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		if f.c.fieldFlow && !textual(v) {
			widen(f.c, f.c.fields, fieldKey{structOf(a.X.Type()), a.Field}, val)
		}
		whole := f.fieldStored(a, val)
		return f.set(a, val) || whole
	case *ssa.IndexAddr:
		return f.set(a.X, val)
	case *ssa.Global:
		widen(f.c, f.c.globals, a, val)
		return false
	}
	return f.set(addr, val)
}

// textual reports whether v is a string, a byte slice or a pointer to
// either, as itself or in an interface: a name, a message or an encoding.
// A clock formatted into one and stored in a field is not followed
// package-wide through the field: the package does not read it back as a
// time, and every other struct of the type would carry it (a run's
// encoded input, its id).
func textual(v ssa.Value) bool {
	if mi, ok := v.(*ssa.MakeInterface); ok {
		v = mi.X
	}
	t := typesx.Deref(v.Type())
	if b, ok := t.Underlying().(*types.Basic); ok {
		return b.Info()&types.IsString != 0
	}
	if s, ok := t.Underlying().(*types.Slice); ok {
		b, ok := s.Elem().Underlying().(*types.Basic)
		return ok && b.Kind() == types.Byte
	}
	return false
}

// fieldStored records that val was stored in a field of the struct that
// a belongs to, and of the structs (or slices of structs) that one is in:
// a struct passed whole to SQL carries what its fields hold. It reports
// whether that changed anything.
func (f *flow) fieldStored(a *ssa.FieldAddr, val labelled) bool {
	if val.l == 0 {
		return false
	}
	changed := false
	for x := a.X; x != nil; {
		changed = f.addFields(x, val) || changed
		switch y := x.(type) {
		case *ssa.FieldAddr:
			x = y.X
		case *ssa.IndexAddr:
			x = y.X
		case *ssa.UnOp:
			// A pointer loaded from a variable: the variable holds what
			// the struct it points to holds (see step's Store).
			x = nil
			if _, ok := y.X.(*ssa.FreeVar); ok && y.Op == token.MUL {
				x = y.X
			} else if _, ok := y.X.(*ssa.Alloc); ok && y.Op == token.MUL {
				x = y.X
			}
		default:
			x = nil
		}
	}
	return changed
}

// addFields records that the fields of the struct that x is, or points
// to, hold val, and reports whether that changed anything.
func (f *flow) addFields(x ssa.Value, val labelled) bool {
	if f.structs == nil {
		f.structs = make(map[ssa.Value]labelled)
	}
	cur := f.structs[x]
	if !grew(cur, union(cur, val)) {
		return false
	}
	f.structs[x] = union(cur, val)
	return true
}

// fieldsOf returns what the fields of the struct that a is, or points to,
// were stored from in this function (see fieldStored).
func (f *flow) fieldsOf(a ssa.Value) labelled {
	for {
		switch v := a.(type) {
		case *ssa.MakeInterface:
			a = v.X
			continue
		case *ssa.ChangeType:
			a = v.X
			continue
		case *ssa.UnOp:
			if v.Op == token.MUL { // a struct passed by value, loaded from its variable
				a = v.X
				continue
			}
		}
		return f.structs[a]
	}
}

// widen adds val's clock bits to m[k], and queues k's readers again when
// that changed anything.
func widen[K comparable](c *checker, m map[K]labelled, k K, val labelled) {
	val.l &= clockBits
	if cur := m[k]; grew(cur, union(cur, val)) {
		m[k] = union(cur, val)
		c.changed(k)
	}
}

// field returns what the package stored in the field k, in a lease
// package.
func (c *checker) field(k fieldKey) labelled {
	if !c.fieldFlow {
		return labelled{}
	}
	c.reads(k)
	return c.fields[k]
}

func (f *flow) load(addr ssa.Value) labelled {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		return union(union(f.vals[a], f.vals[a.X]), f.c.field(fieldKey{structOf(a.X.Type()), a.Field}))
	case *ssa.IndexAddr:
		return f.vals[a.X]
	case *ssa.Global:
		f.c.reads(a)
		return f.c.globals[a]
	}
	return f.vals[addr]
}

// structOf returns the struct type that a pointer (or value) of type t holds.
func structOf(t types.Type) *types.Struct {
	s, _ := typesx.Deref(t).Underlying().(*types.Struct)
	return s
}

// call applies a call: its result's labels, and its SQL sinks.
func (f *flow) call(instr ssa.CallInstruction) bool {
	common := instr.Common()
	var args labelled
	if common.IsInvoke() {
		args = f.get(common.Value, instr)
	}
	for _, a := range common.Args {
		args = union(args, f.get(a, instr))
	}

	// 1. What the result derives from.
	var result labelled
	callee := common.StaticCallee()
	obj := sqlcall.Callee(common)
	via, inner := f.c.returnsClock(callee, obj)
	switch desc, read := f.c.clockRead(obj); {
	case inner != nil && !returnsTime(common.Signature()):
		// A function of the package that passes on a read it made (a
		// struct, a term, a decision built from it): the read is where
		// the clock is, and is reported there.
		result = labelled{l: clockRead, srcs: sources{{pos: inner.pos, desc: readName(inner.desc) + " (returned by " + shortName(obj) + ")"}}}
		if l, ok := f.localResult(common, callee, instr); ok {
			result = union(result, l)
		}
	case via != "", read:
		// A function known to return a clock value, or a clock read. Its
		// result derives from its arguments as well: time.Until(deadline)
		// with a deadline set from the clock elsewhere decides what both
		// reads decide.
		if via != "" {
			desc = via + " via " + shortName(obj)
		}
		result = labelled{l: clockRead, srcs: sources{{pos: instr.Pos(), desc: desc}}}
		if l, ok := f.localResult(common, callee, instr); ok {
			result = union(result, l)
			break
		}
		params := obj.Signature().Params().Len()
		for _, a := range common.Args[len(common.Args)-params:] {
			result = union(result, f.get(a, instr))
		}
	case schedules(obj):
		// A timer or a deadline schedules; it does not decide.
	case callee == nil && !common.IsInvoke() && f.get(common.Value, instr).l&clockFunc != 0:
		// A function that reads the clock, called: a read here.
		var srcs sources
		for _, s := range f.get(common.Value, instr).srcs {
			if s.fn {
				srcs = srcs.union(sources{{pos: instr.Pos(), desc: s.desc}})
			}
		}
		result = labelled{l: clockRead, srcs: srcs}
	default:
		// A function of this package: its result derives from the
		// arguments its summary says it does. A call with nothing known
		// about it: from all its arguments (t.Add(d), fmt.Sprintf,
		// pgx.CopyFromRows).
		if l, ok := f.localResult(common, callee, instr); ok {
			result = l
		} else {
			result = args
			if identifier(common.Signature()) || nameFormat(obj, common) {
				// An identifier made from the clock (ulid.New(ulid.Now(),
				// entropy), fmt.Sprintf("sched-%s-%s", name, now)) names a
				// row; it decides nothing as a time.
				result.l &^= clockBits
				result.srcs = nil
			}
		}
	}

	// 2. Sinks: the arguments of SQL calls, and of functions that pass
	// their parameters to SQL. What such a call returns (a command tag,
	// rows, an error) is the database's answer, not its arguments' origin:
	// a clock in the arguments is reported there, and does not decide what
	// the result decides.
	if m := sqlcall.Executes(common); m != nil {
		result = sqlResult(result, via)
		f.runsSQL(instr, m.Name())
		sqlIndex := sqlcall.SQLParam(m.Signature())
		for i, a := range sqlcall.Args(common) {
			what, stamp := "an argument", common
			if i == sqlIndex {
				what, stamp = "the SQL text", nil
			}
			f.sink(a, instr, what+" of "+m.Name(), stamp)
		}
	} else if m, sends, ok := sqltext.BuilderCall(common); ok {
		// A query builder's step: its arguments become the statement's
		// parts; the step that sends it is judged as an SQL call.
		var stamp *ssa.CallCommon
		if sends {
			result = sqlResult(result, via)
			f.runsSQL(instr, m.Name())
			stamp = common
		}
		for _, a := range common.Args {
			f.sink(a, instr, "an argument of "+m.Name()+", which builds SQL", stamp)
		}
	} else if m := f.c.sqlInterfaceCall(common); m != nil {
		result = sqlResult(result, via)
		name := shortName(m)
		f.runsSQL(instr, name)
		for _, a := range common.Args {
			f.sink(a, instr, "an argument of "+name+", which executes SQL", nil)
		}
	} else if sum := f.c.executesSQL(callee, obj); sum != nil {
		result = sqlResult(result, via)
		f.runsSQL(instr, shortName(obj))
		for i, a := range common.Args {
			if i < 64 && sum.Params&(1<<i) != 0 {
				f.sink(a, instr, "an argument of "+shortName(obj)+", which passes it to SQL", common)
			}
		}
	}

	// 3. Function literals passed to the call: the callee is expected to
	// run them (timeoututil.WithTimeout(ctx, d, name, func(ctx) { ... }),
	// errgroup's Go, a transaction helper's callback), so a literal that
	// executes SQL makes the call execute SQL. What the literal's own
	// arguments are is not known here; what it captures is.
	for _, a := range common.Args {
		if mc, ok := a.(*ssa.MakeClosure); ok {
			if name, ok := f.closureSQL(mc, instr); ok {
				result = sqlResult(result, via)
				f.runsSQL(instr, name)
			}
		}
	}
	changed := false
	if mc, ok := common.Value.(*ssa.MakeClosure); ok && !common.IsInvoke() {
		f.closureSQL(mc, instr) // a literal called where it is written
		changed = f.closureStores(common, mc, instr)
	}

	if v := instr.Value(); v != nil {
		return f.set(v, result) || changed
	}
	return changed
}

// closureStores applies what a function literal called here stores into
// the variables it captures (see summary.frees): rescue.FinalizedAt =
// append(rescue.FinalizedAt, finalizedAt) in a literal makes the captured
// rescue hold what the call passed as finalizedAt. It reports whether that
// changed anything.
func (f *flow) closureStores(common *ssa.CallCommon, mc *ssa.MakeClosure, at ssa.Instruction) bool {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || !f.c.local[fn] {
		return false
	}
	f.c.reads(fn)
	s := f.c.sums[fn]
	if s == nil {
		return false
	}
	changed := false
	for j, stored := range s.frees {
		if j >= len(mc.Bindings) || stored.l == 0 {
			continue
		}
		l := labelled{l: stored.l & clockBits, srcs: stored.srcs}
		for i, a := range common.Args {
			if i < 62 && stored.l&(1<<i) != 0 {
				l = union(l, union(f.get(a, at), f.fieldsOf(a)))
			}
		}
		for k, b := range mc.Bindings {
			if i := len(fn.Params) + k; i < 62 && stored.l&(1<<i) != 0 {
				l = union(l, union(f.get(b, at), f.fieldsOf(b)))
			}
		}
		if l.l == 0 {
			continue
		}
		b := mc.Bindings[j]
		changed = f.set(b, l) || changed
		changed = f.addFields(b, l) || changed
	}
	return changed
}

// localResult returns what the result of a call of callee derives from,
// when callee is a function of the package whose body the fixpoint
// analyses: the arguments, and the values a function literal captures,
// that its summary says its results derive from. A result computed from a
// parameter only for a log line (a stack trace built with the receiver's
// buffer size) does not carry that parameter's clock.
func (f *flow) localResult(common *ssa.CallCommon, callee *ssa.Function, at ssa.Instruction) (labelled, bool) {
	if callee == nil || !f.c.local[callee] {
		return labelled{}, false
	}
	f.c.reads(callee)
	var results uint64
	if s := f.c.sums[callee]; s != nil {
		results = s.results
	}
	var l labelled
	for i, a := range common.Args {
		if i < 64 && results&(1<<i) != 0 {
			l = union(l, f.get(a, at))
		}
	}
	if mc, ok := common.Value.(*ssa.MakeClosure); ok {
		for j, b := range mc.Bindings {
			if i := len(callee.Params) + j; i < 64 && results&(1<<i) != 0 {
				l = union(l, f.get(b, at))
			}
		}
	}
	return l, true
}

// closureSQL reports whether the function literal that mc makes executes
// SQL, and names its first SQL call. The parameters of the function being
// analysed that the literal captures and passes to SQL are recorded as
// reaching SQL; a clock value it captures is reported inside the literal,
// which sees it as a free variable, not here.
func (f *flow) closureSQL(mc *ssa.MakeClosure, at ssa.Instruction) (string, bool) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return "", false
	}
	f.c.reads(fn)
	s := f.c.sums[fn]
	if s == nil || !s.sql {
		return "", false
	}
	for j, b := range mc.Bindings {
		if i := len(fn.Params) + j; i < 64 && s.params&(1<<i) != 0 {
			f.params |= uint64(union(f.get(b, at), f.fieldsOf(b)).l & paramBits)
		}
	}
	return s.name, true
}

// sqlResult is the result of an SQL-executing call: a clock only when the
// function is known to return one (via), never its arguments'.
func sqlResult(result labelled, via string) labelled {
	if via != "" {
		return result
	}
	return labelled{}
}

func (f *flow) runsSQL(instr ssa.Instruction, name string) {
	f.sql = true
	if f.sqlBlocks == nil {
		f.sqlBlocks = make(map[*ssa.BasicBlock]sqlCall)
	}
	if _, ok := f.sqlBlocks[instr.Block()]; !ok {
		f.sqlBlocks[instr.Block()] = sqlCall{name: name, pos: instr.Pos()}
	}
}

// sink records that a reaches an SQL argument of the call at at. A clock
// in it is reported unless the call, when given, only stamps rows (see
// stamps).
func (f *flow) sink(a ssa.Value, at ssa.Instruction, what string, call *ssa.CallCommon) {
	if typesx.IsNamed(a.Type(), "context", "Context") {
		return // a context carries deadlines, which schedule
	}
	l := union(f.get(a, at), f.fieldsOf(a))
	f.params |= uint64(l.l & paramBits)
	if l.l&clockRead != 0 && (call == nil || !f.c.onlyStamps(call)) {
		f.report(l, "flows into "+what+why, at.Pos())
	}
}

// report records a finding at each clock read that l derives from; at is
// the SQL call that the read reaches or decides.
func (f *flow) report(l labelled, what string, at token.Pos) {
	if f.found == nil {
		f.found = make(map[finding]bool)
	}
	for _, src := range l.reads() {
		f.found[finding{src: src, what: what, at: at}] = true
	}
}

// finish finds the branches that the clock decides, updates the summary,
// and returns the findings.
func (f *flow) finish() []finding {
	for _, b := range f.fn.Blocks {
		iff, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
		if !ok || len(f.sqlBlocks) == 0 {
			continue
		}
		cond := f.get(iff.Cond, iff)
		if cond.l&clockRead == 0 {
			continue
		}
		if call, ok := f.controls(b); ok {
			f.report(cond, "decides whether "+call.name+" runs"+why, call.pos)
		}
	}

	s := f.c.summary(f.fn)
	if f.storesFrees(s) {
		f.c.changed(f.fn)
	}
	if (f.returns != nil && s.returns == nil) || (f.sql && !s.sql) || f.params&^s.params != 0 || f.results&^s.results != 0 {
		f.c.changed(f.fn)
		if s.returns == nil {
			s.returns = f.returns
		}
		if f.sql && !s.sql {
			s.name = f.firstSQL()
		}
		s.sql = s.sql || f.sql
		s.params |= f.params
		s.results |= f.results
	}
	var out []finding
	for fd := range f.found {
		out = append(out, fd)
	}
	return out
}

// storesFrees records in s what the function stores into the variables
// it captures, and reports whether s grew.
func (f *flow) storesFrees(s *summary) bool {
	grown := false
	for j, fv := range f.fn.FreeVars {
		l := union(f.vals[fv], f.structs[fv])
		if i := len(f.fn.Params) + j; i < 62 {
			l.l &^= labels(1) << i // the variable itself
		}
		if l.l == 0 {
			continue
		}
		if len(s.frees) <= j {
			s.frees = append(s.frees, make([]labelled, j+1-len(s.frees))...)
		}
		if next := union(s.frees[j], l); grew(s.frees[j], next) {
			s.frees[j] = next
			grown = true
		}
	}
	return grown
}

// firstSQL names the SQL call of the function's first block that runs one.
func (f *flow) firstSQL() string {
	for _, b := range f.fn.Blocks {
		if call, ok := f.sqlBlocks[b]; ok {
			return call.name
		}
	}
	return ""
}

// controls returns the first SQL call that the branch at the end of b
// controls, if any: a call whose block is control dependent on it, directly or
// through the branches it decides (see postdom).
func (f *flow) controls(b *ssa.BasicBlock) (sqlCall, bool) {
	dom := f.c.doms[f.fn]
	if dom == nil {
		dom = newPostdom(f.fn)
		f.c.doms[f.fn] = dom
	}
	decided := dom.controlled(b.Index)
	for _, blk := range f.fn.Blocks { // in order, for a deterministic name
		if call, ok := f.sqlBlocks[blk]; ok && decided[blk.Index] {
			return call, true
		}
	}
	return sqlCall{}, false
}

// shortName is pkg.F or pkg.T.M, for messages.
func shortName(fn *types.Func) string {
	if fn == nil {
		return "a function"
	}
	name := fn.Name()
	if named := typesx.RecvNamed(fn); named != nil {
		name = named.Obj().Name() + "." + name
	}
	if fn.Pkg() != nil {
		name = fn.Pkg().Name() + "." + name
	}
	return name
}

// nameFormat reports whether call is fmt.Sprintf with a constant format
// that spells a name: text besides its verbs, with a letter and without a
// space or a quote ("sched-%s-trigger-%s", "lock:%s:%d"). What it makes is
// an identifier; a time formatted into SQL text ("... = '%s'") or alone
// ("%d") stays a time.
func nameFormat(fn *types.Func, call *ssa.CallCommon) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "fmt" || fn.Name() != "Sprintf" || len(call.Args) == 0 {
		return false
	}
	c, ok := call.Args[0].(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return false
	}
	letter := false
	format := constant.StringVal(c.Value)
	for i := 0; i < len(format); i++ {
		switch ch := format[i]; {
		case ch == '%':
			// Skip the verb: flags, width and precision, then its letter.
			i++
			for i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0 {
				i++
			}
		case ch == ' ' || ch == '\'' || ch == '"' || ch == '\t' || ch == '\n':
			return false
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z':
			letter = true
		}
	}
	return letter
}

// identifier reports whether sig's first result is an array of bytes: a
// ULID, a UUID, a hash, never a time.
func identifier(sig *types.Signature) bool {
	if sig.Results().Len() == 0 {
		return false
	}
	a, ok := sig.Results().At(0).Type().Underlying().(*types.Array)
	if !ok {
		return false
	}
	b, ok := a.Elem().Underlying().(*types.Basic)
	return ok && (b.Kind() == types.Byte || b.Kind() == types.Uint8)
}
