package clock

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/postdom"
	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

var errorType = types.Universe.Lookup("error").Type()

const why = ": the database clock must decide, not the process clock"

// flow is the dataflow over one function.
type flow struct {
	c    *checker
	fn   *ssa.Function
	vals map[ssa.Value]labelled

	sql          bool
	params       uint64
	wholes       uint64 // the params that reach SQL whole, not only by their fields
	returns      *source
	results      uint64                      // parameters (then free variables) that the results derive from
	wholeResults uint64                      // ... as themselves, not only by their fields
	sqlBlocks    map[*ssa.BasicBlock]sqlCall // blocks that run SQL, and their first SQL call
	structs      map[ssa.Value]labelled      // structs, what their fields were stored from
	found        map[finding]bool
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
		l = labelled{l: l.l &^ clockBits, part: l.part &^ clockBits}
	}
	cur := f.vals[v]
	next := union(cur, l)
	if !grew(cur, next) {
		return false
	}
	f.vals[v] = next
	return true
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
		return f.set(in, f.field(in.X, in.Field, in))
	case *ssa.FieldAddr:
		// The field's address carries what the field holds, as a
		// variable's does (see load).
		return f.set(in, f.field(in.X, in.Field, in))
	case *ssa.MakeSlice, *ssa.MakeMap, *ssa.MakeChan:
		// A new container holds what is stored in it, not its size.
		return false
	case *ssa.Return:
		for _, r := range in.Results {
			l := f.get(r, in)
			// A struct returned carries the parameters its fields were
			// set from (a constructor); its clock, as in an argument, only
			// when set in the caller (see clock/limitations).
			r := union(l, f.fieldsOf(r))
			f.results |= uint64(r.l & paramBits)
			f.wholeResults |= r.wholeParams()
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

func (f *flow) runsSQL(instr ssa.Instruction, name string) {
	f.sql = true
	if f.sqlBlocks == nil {
		f.sqlBlocks = make(map[*ssa.BasicBlock]sqlCall)
	}
	if _, ok := f.sqlBlocks[instr.Block()]; !ok {
		f.sqlBlocks[instr.Block()] = sqlCall{name: name, pos: instr.Pos()}
	}
}

// sink records that a reaches an SQL argument of the call at at; whole
// is false where the callee, a function of this lease package, passes
// only fields of it to SQL, and so sees what they hold where it reads
// them. A clock in it is reported unless the call, when given, only
// stamps rows (see stamps).
func (f *flow) sink(a ssa.Value, at ssa.Instruction, what string, call *ssa.CallCommon, whole bool) {
	if typesx.IsNamed(a.Type(), "context", "Context") {
		return // a context carries deadlines, which schedule
	}
	l := union(f.get(a, at), f.fieldsOf(a))
	if whole {
		f.wholes |= l.wholeParams()
	} else {
		l = l.bare()
	}
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
		// A clock only in the fields of a struct decides no branch on
		// the struct itself (a length, a nil test): a test of the field
		// reads the field.
		cond := f.get(iff.Cond, iff).bare()
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
	if (f.returns != nil && s.returns == nil) || (f.sql && !s.sql) || f.params&^s.params != 0 || f.wholes&^s.wholes != 0 || f.results&^s.results != 0 || f.wholeResults&^s.wholeResults != 0 {
		f.c.changed(f.fn)
		if s.returns == nil {
			s.returns = f.returns
		}
		if f.sql && !s.sql {
			s.name = f.firstSQL()
		}
		s.sql = s.sql || f.sql
		s.params |= f.params
		s.wholes |= f.wholes
		s.results |= f.results
		s.wholeResults |= f.wholeResults
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
// through the branches it decides (see package postdom).
func (f *flow) controls(b *ssa.BasicBlock) (sqlCall, bool) {
	dom := f.c.doms[f.fn]
	if dom == nil {
		dom = postdom.New(f.fn)
		f.c.doms[f.fn] = dom
	}
	decided := dom.Controlled(b.Index)
	for _, blk := range f.fn.Blocks { // in order, for a deterministic name
		if call, ok := f.sqlBlocks[blk]; ok && decided[blk.Index] {
			return call, true
		}
	}
	return sqlCall{}, false
}
