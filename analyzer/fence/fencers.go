package fence

// This file finds the functions that fence a transaction for their
// callers, so that a write after leasepkg's Manager.Fence(ctx, tx, l), or
// inside the callback of its Manager.Tx, is fenced in the package that
// calls them as it is in the package that sends the fence.

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
)

// Fences is the fact that a function fences a transaction: it runs a
// fence, or calls a function that does, on the transaction it is given as
// its parameter Param (a method's receiver is parameter 0), or, where
// Param is -1, on a transaction it begins and hands to a callback it is
// given. Holder and Epoch say what the fence tests.
type Fences struct {
	Param         int
	Holder, Epoch bool
}

// AFact marks Fences as a fact.
func (*Fences) AFact() {}

func (f *Fences) String() string {
	if f.Param < 0 {
		return "fences the transaction it hands to its callback"
	}
	return "fences the transaction it is given"
}

// fencers returns the functions of the package that fence a transaction
// for their callers (see Fences), given the fences that sites send on
// each, and exports a fact on each.
func (c *checker) fencers(funcs []*ssa.Function, sites []*site) map[*types.Func]*Fences {
	out := make(map[*types.Func]*Fences)
	// What fences each transaction value: the package's own fence
	// statements, then the calls of fencers, until nothing is added.
	fenced := make(map[ssa.Value]*Fences)
	for _, s := range sites {
		for _, ss := range s.stmts {
			if f := ss.st.fence; f != nil && (f.holder || f.epoch) {
				if recv := sqlcall.Receiver(s.call.Common()); recv != nil && sqlcall.Transaction(recv.Type()) {
					fenced[recv] = &Fences{Holder: f.holder, Epoch: f.epoch}
					// A batch fences the transaction that sends it.
					if tx := sender(recv); tx != nil {
						fenced[tx] = fenced[recv]
					}
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					call, ok := instr.(ssa.CallInstruction)
					if !ok {
						continue
					}
					if tx, f := c.fencesArg(call.Common(), out); tx != nil && fenced[tx] == nil {
						fenced[tx], changed = f, true
					}
				}
			}
		}
		for tx, f := range fenced {
			fn := owner(tx)
			if fn == nil {
				continue
			}
			obj, ok := fn.Object().(*types.Func)
			if !ok || out[obj] != nil {
				continue
			}
			param := -1
			if p, ok := tx.(*ssa.Parameter); ok {
				param = paramIndex(fn, p)
			} else if !callsParam(fn) {
				continue
			}
			out[obj] = &Fences{Param: param, Holder: f.Holder, Epoch: f.Epoch}
			changed = true
		}
	}
	for obj, f := range out {
		c.pass.ExportObjectFact(obj, f)
	}
	return out
}

// fencesArg returns the transaction that call fences, a call of a
// function of the package in local or of one a fact marks, and what the
// fence tests; nil for any other call, and for one that fences the
// transaction it hands to a callback.
func (c *checker) fencesArg(call *ssa.CallCommon, local map[*types.Func]*Fences) (ssa.Value, *Fences) {
	f := c.fencer(sqlcall.Callee(call), local)
	if f == nil || f.Param < 0 {
		return nil, nil
	}
	args := call.Args
	if call.IsInvoke() {
		args = append([]ssa.Value{call.Value}, args...)
	}
	if f.Param >= len(args) {
		return nil, nil
	}
	return args[f.Param], f
}

// fencer returns what obj fences: a function of the package in local, or
// one a fact marks; nil if it fences nothing.
func (c *checker) fencer(obj *types.Func, local map[*types.Func]*Fences) *Fences {
	if obj == nil {
		return nil
	}
	if f := local[obj]; f != nil {
		return f
	}
	f := new(Fences)
	if obj.Pkg() != c.pass.Pkg && c.pass.ImportObjectFact(obj.Origin(), f) {
		return f
	}
	return nil
}

// sender returns the transaction that sends batch, a pgx.Batch, by its
// SendBatch; nil if none does.
func sender(batch ssa.Value) ssa.Value {
	refs := batch.Referrers()
	if refs == nil {
		return nil
	}
	for _, r := range *refs {
		call, ok := r.(ssa.CallInstruction)
		if !ok {
			continue
		}
		m := sqlcall.Callee(call.Common())
		if m == nil || m.Name() != "SendBatch" || !slices.Contains(call.Common().Args, batch) {
			continue
		}
		if tx := sqlcall.Receiver(call.Common()); tx != nil && sqlcall.Transaction(tx.Type()) {
			return tx
		}
	}
	return nil
}

// owner returns the function whose parameter or local v is, or nil.
func owner(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case *ssa.Parameter:
		return v.Parent()
	case ssa.Instruction:
		return v.Parent()
	}
	return nil
}

// paramIndex returns p's index among fn's parameters, its receiver first.
func paramIndex(fn *ssa.Function, p *ssa.Parameter) int {
	for i, q := range fn.Params {
		if q == p {
			return i
		}
	}
	return -1
}

// callsParam reports whether fn calls a function it is given: the
// callback that Manager.Tx runs on the transaction it fenced.
func callsParam(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(ssa.CallInstruction)
			if !ok || call.Common().IsInvoke() {
				continue
			}
			if p, ok := call.Common().Value.(*ssa.Parameter); ok && p.Parent() == fn {
				return true
			}
		}
	}
	return false
}

// calledFencers adds to txFences the sites that run on a transaction after
// a call that fenced it (see Fences), and reports whether the package
// calls any function that fences a transaction: its functions that run on
// a transaction they are given, a callback's included, may have been
// given a fenced one. A fence taken in another function is not checked
// here: what it lacks is its own package's finding.
func (c *checker) calledFencers(funcs []*ssa.Function, sites []*site, local map[*types.Func]*Fences, txFences map[*site]*fence) bool {
	any := false
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok || c.fencer(sqlcall.Callee(call.Common()), local) == nil {
					continue
				}
				any = true
				tx, f := c.fencesArg(call.Common(), local)
				if tx == nil {
					continue
				}
				for _, s := range sites {
					if txFences[s] == nil && sqlcall.Receiver(s.call.Common()) == tx && precedes(call, s.call) {
						txFences[s] = &fence{tests: tests{holder: f.Holder, epoch: f.Epoch}, unknown: true, end: -1}
					}
				}
			}
		}
	}
	return any
}
