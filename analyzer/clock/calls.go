package clock

// This file applies a call to the dataflow: its result from the callee's
// summary or facts, the SQL it runs, closures and what they capture; and
// how a callee is named in messages.

import (
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// call applies a call: what its result derives from (1), the SQL it runs
// and the arguments that reach SQL (2), and the function literals it is
// given (3). What an SQL call returns (a command tag, rows, an error) is
// the database's answer, not its arguments' origin: a clock in the
// arguments is reported there, and does not decide what the result
// decides.
func (f *flow) call(instr ssa.CallInstruction) bool {
	common := instr.Common()
	callee := common.StaticCallee()
	obj := sqlcall.Callee(common)
	via, inner := f.c.returnsClock(callee, obj)
	result := f.callResult(instr, callee, obj, via, inner)
	sends := f.callSinks(instr, callee, obj)
	if f.callLiterals(instr) || sends {
		result = sqlResult(result, via)
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

// callResult returns what the result of instr, a call of callee (obj),
// derives from; via and inner are what returnsClock says of it.
func (f *flow) callResult(instr ssa.CallInstruction, callee *ssa.Function, obj *types.Func, via string, inner *source) labelled {
	common := instr.Common()
	switch desc, read := f.c.clockRead(obj); {
	case inner != nil && !returnsTime(common.Signature()):
		// A function of the package that passes on a read it made (a
		// struct, a term, a decision built from it): the read is where
		// the clock is, and is reported there.
		result := labelled{l: clockRead, srcs: sources{{pos: inner.pos, desc: readName(inner.desc) + " (returned by " + shortName(obj) + ")"}}}
		if l, ok := f.localResult(common, callee, instr); ok {
			result = union(result, l)
		}
		return result
	case via != "", read:
		// A function known to return a clock value, or a clock read. Its
		// result derives from its arguments as well: time.Until(deadline)
		// with a deadline set from the clock elsewhere decides what both
		// reads decide.
		if via != "" {
			desc = via + " via " + shortName(obj)
		}
		result := labelled{l: clockRead, srcs: sources{{pos: instr.Pos(), desc: desc}}}
		if l, ok := f.localResult(common, callee, instr); ok {
			return union(result, l)
		}
		params := obj.Signature().Params().Len()
		for _, a := range common.Args[len(common.Args)-params:] {
			result = union(result, f.get(a, instr))
		}
		return result
	case schedules(obj):
		// A timer or a deadline schedules; it does not decide.
		return labelled{}
	case callee == nil && !common.IsInvoke() && f.get(common.Value, instr).l&clockFunc != 0:
		// A function that reads the clock, called: a read here.
		var srcs sources
		for _, s := range f.get(common.Value, instr).srcs {
			if s.fn {
				srcs = srcs.union(sources{{pos: instr.Pos(), desc: s.desc}})
			}
		}
		return labelled{l: clockRead, srcs: srcs}
	}
	// A function of this package: its result derives from the arguments
	// its summary says it does. A call with nothing known about it: from
	// all its arguments (t.Add(d), fmt.Sprintf, pgx.CopyFromRows).
	if l, ok := f.localResult(common, callee, instr); ok {
		return l
	}
	if b, ok := common.Value.(*ssa.Builtin); ok && (b.Name() == "len" || b.Name() == "cap") {
		// A length is a part of what it measures.
		return f.c.part(f.get(common.Args[0], instr))
	}
	var result labelled
	if common.IsInvoke() {
		result = f.get(common.Value, instr)
	}
	for _, a := range common.Args {
		result = union(result, f.get(a, instr))
	}
	if identifier(common.Signature()) || nameFormat(obj, common) {
		// An identifier made from the clock (ulid.New(ulid.Now(),
		// entropy), fmt.Sprintf("sched-%s-%s", name, now)) names a row; it
		// decides nothing as a time.
		result.l &^= clockBits
		result.srcs = nil
	}
	return result
}

// callSinks records the SQL that instr, a call of callee (obj), runs, and
// sinks its arguments that reach SQL: those of SQL calls, of query
// builders' steps, of SQL interfaces' methods, and of functions that pass
// their parameters to SQL. It reports whether the call runs SQL.
func (f *flow) callSinks(instr ssa.CallInstruction, callee *ssa.Function, obj *types.Func) bool {
	common := instr.Common()
	if m := sqlcall.Executes(common); m != nil && f.c.sessionOnly(common) {
		// Its session's settings or temporary objects: no row, and so
		// neither a sink nor SQL that a clock could decide.
		return true
	} else if m != nil {
		f.runsSQL(instr, m.Name())
		sqlIndex := sqlcall.SQLParam(m.Signature())
		for i, a := range sqlcall.Args(common) {
			what, stamp := "an argument", common
			if i == sqlIndex {
				what, stamp = "the SQL text", nil
			}
			f.sink(a, instr, what+" of "+m.Name(), stamp, true)
		}
		return true
	}
	if m, sends, ok := sqltext.BuilderCall(common); ok {
		// A query builder's step: its arguments become the statement's
		// parts; the step that sends it is judged as an SQL call.
		var stamp *ssa.CallCommon
		if sends {
			f.runsSQL(instr, m.Name())
			stamp = common
		}
		for _, a := range common.Args {
			f.sink(a, instr, "an argument of "+m.Name()+", which builds SQL", stamp, true)
		}
		return sends
	}
	if m := f.c.sqlInterfaceCall(common, instr.Pos()); m != nil {
		name := shortName(m)
		f.runsSQL(instr, name)
		for _, a := range common.Args {
			f.sink(a, instr, "an argument of "+name+", which executes SQL", nil, true)
		}
		return true
	}
	if sum := f.c.executesSQL(callee, obj); sum != nil {
		f.runsSQL(instr, shortName(obj))
		for i, a := range common.Args {
			if i < 64 && sum.Params&(1<<i) != 0 {
				f.sink(a, instr, "an argument of "+shortName(obj)+", which passes it to SQL", common, f.c.takesWhole(callee, i))
			}
		}
		return true
	}
	return false
}

// callLiterals records the SQL that the function literals given to instr
// run: the callee is expected to run them (timeoututil.WithTimeout(ctx, d,
// name, func(ctx) { ... }), errgroup's Go, a transaction helper's
// callback), so a literal that executes SQL makes the call execute SQL.
// What the literal's own arguments are is not known here; what it captures
// is. It reports whether any of them runs SQL.
func (f *flow) callLiterals(instr ssa.CallInstruction) bool {
	runs := false
	for _, a := range instr.Common().Args {
		if mc, ok := a.(*ssa.MakeClosure); ok {
			if name, ok := f.closureSQL(mc, instr); ok {
				f.runsSQL(instr, name)
				runs = true
			}
		}
	}
	return runs
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
		l := labelled{l: stored.l & clockBits, srcs: stored.srcs, part: stored.part & clockBits, psrcs: stored.psrcs}
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
	var results, wholes uint64
	if s := f.c.sums[callee]; s != nil {
		results, wholes = s.results, s.wholeResults
	}
	var l labelled
	for i, a := range common.Args {
		if i < 64 && results&(1<<i) != 0 {
			arg := f.get(a, at)
			if wholes&(1<<i) == 0 {
				// Derived from fields of it, which the callee read as
				// the package stored them.
				arg = f.c.part(arg)
			}
			l = union(l, arg)
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
			l := union(f.get(b, at), f.fieldsOf(b))
			f.params |= uint64(l.l & paramBits)
			f.wholes |= l.wholeParams()
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
// that spells a name: text besides its verbs, with a letter or joining
// a string to another verb by a separator, and without a space or a quote
// ("sched-%s-trigger-%s", "lock:%s:%d", "%s_%s", "%s-%d"). What it makes
// is an identifier; a time formatted into SQL text ("... = '%s'"), alone
// ("%d") or as a date ("%d-%02d-%02d") stays a time.
func nameFormat(fn *types.Func, call *ssa.CallCommon) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "fmt" || fn.Name() != "Sprintf" || len(call.Args) == 0 {
		return false
	}
	c, ok := call.Args[0].(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return false
	}
	letter, sep, verbs, strs := false, false, 0, 0
	format := constant.StringVal(c.Value)
	for i := 0; i < len(format); i++ {
		switch ch := format[i]; {
		case ch == '%':
			// Skip the verb: flags, width and precision, then its letter.
			i++
			for i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0 {
				i++
			}
			if i < len(format) && format[i] != '%' {
				verbs++
				if format[i] == 's' || format[i] == 'v' {
					strs++
				}
			}
		case ch == ' ' || ch == '\'' || ch == '"' || ch == '\t' || ch == '\n':
			return false
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z':
			letter = true
		case strings.IndexByte("-_:/#@", ch) >= 0:
			sep = sep || verbs > 0
		}
	}
	return letter || sep && verbs >= 2 && strs > 0
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
