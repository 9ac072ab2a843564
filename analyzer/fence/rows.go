package fence

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// checkRows reports a fenced write, renewal or takeover (what) sent by Exec
// whose rows affected are never compared, or, for a write, compared only
// after the transaction commits. A fence that refuses the write, or a
// renewal that finds the lease gone, affects no rows and returns no error
// (why): the count is the only verdict. Query and QueryRow report through
// the rows they return, and a batch through its results, which are not
// followed.
func (c *checker) checkRows(s *site, what, why string) {
	call, ok := s.call.(*ssa.Call)
	if !ok || (s.fn.Name() != "Exec" && s.fn.Name() != "ExecContext") {
		return
	}
	var result ssa.Value
	for _, r := range *call.Referrers() {
		if e, ok := r.(*ssa.Extract); ok && e.Index == 0 && used(e) {
			result = e
		}
	}
	if result == nil {
		fix := "compare RowsAffected"
		if what == "fenced write" {
			fix += " before commit"
		}
		c.reportRows(s, fmt.Sprintf("the result of this %s is discarded: %s; %s", what, why, fix))
		return
	}
	checks := (&rowsFlow{c: c, memo: make(map[*ssa.Parameter]bool)}).checks(result)
	if len(checks) == 0 {
		c.reportRows(s, fmt.Sprintf("the rows affected by this %s are never compared: %s", what, why))
		return
	}
	if what != "fenced write" {
		return
	}
	// Every commit of the same transaction in this function must come
	// after a check.
	recv := sqlcall.Receiver(call.Common())
	if recv == nil || !sqlcall.Transaction(recv.Type()) {
		return
	}
	for _, b := range call.Parent().Blocks {
		for _, instr := range b.Instrs {
			commit, ok := instr.(ssa.CallInstruction)
			if !ok || !isCommit(commit.Common(), recv) || !precedes(call, commit) {
				continue
			}
			checked := false
			for _, ck := range checks {
				checked = checked || precedes(ck, commit)
			}
			if !checked {
				c.reportRows(s, "the transaction commits before the rows affected by this fenced write are compared: a refused write commits with the rest")
				return
			}
		}
	}
}

func (c *checker) reportRows(s *site, msg string) {
	c.report(s, sqltext.Text{}, problem{off: -1, msg: msg})
}

// isCommit reports whether call commits the transaction tx.
func isCommit(call *ssa.CallCommon, tx ssa.Value) bool {
	m := sqlcall.Callee(call)
	return m != nil && sqlcall.Commit(m) && sqlcall.Receiver(call) == tx
}

// rowsFlow follows a command tag or sql.Result to where its rows affected
// are compared.
type rowsFlow struct {
	c    *checker
	memo map[*ssa.Parameter]bool
}

// checks returns the instructions of v's function at which v's rows
// affected are compared, or at which v goes where this cannot follow (a
// call outside the package, a return, a store), which count as checks.
func (f *rowsFlow) checks(v ssa.Value) []ssa.Instruction {
	var out []ssa.Instruction
	carries := func(r ssa.Instruction) bool {
		switch r.(type) {
		case *ssa.Phi, *ssa.MakeInterface, *ssa.ChangeType:
			return true
		}
		return false
	}
	walkUses(v, carries, func(r ssa.Instruction, v ssa.Value) bool {
		switch r := r.(type) {
		case *ssa.Store:
			if !intoVarargs(r) {
				out = append(out, r)
			}
		case *ssa.Return, *ssa.MapUpdate, *ssa.Send:
			out = append(out, r)
		case ssa.CallInstruction:
			if f.passes(r, v) {
				out = append(out, r)
			}
		}
		return false
	})
	return out
}

// walkUses calls use with each instruction that refers to v, or to a
// value that carries v on unchanged (a referrer for which carries is
// true: a φ, a conversion, an interface made of it), and the value it
// refers to; each value is followed once. It stops and returns true as
// soon as use returns true.
func walkUses(v ssa.Value, carries func(ssa.Instruction) bool, use func(r ssa.Instruction, v ssa.Value) bool) bool {
	seen := make(map[ssa.Value]bool)
	var visit func(v ssa.Value) bool
	visit = func(v ssa.Value) bool {
		if seen[v] {
			return false
		}
		seen[v] = true
		for _, r := range *v.Referrers() {
			if carries(r) {
				if visit(r.(ssa.Value)) {
					return true
				}
			} else if use(r, v) {
				return true
			}
		}
		return false
	}
	return visit(v)
}

// passes reports whether instr, which takes v, checks v's rows affected:
// it calls RowsAffected on v and compares the count, or hands v to a
// function that does (or that this cannot see into).
func (f *rowsFlow) passes(instr ssa.CallInstruction, v ssa.Value) bool {
	call := instr.Common()
	if sqlcall.Receiver(call) == v {
		m := sqlcall.Callee(call)
		count, ok := instr.(*ssa.Call)
		return ok && m != nil && sqlcall.RowsAffected(m) && compared(count)
	}
	fn := call.StaticCallee()
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg != f.c.pass.Pkg || fn.Blocks == nil {
		return true // beyond sight: assume it checks
	}
	for i, a := range call.Args {
		if a == v && f.param(fn.Params[i]) {
			return true
		}
	}
	return false
}

func (f *rowsFlow) param(p *ssa.Parameter) bool {
	if done, ok := f.memo[p]; ok {
		return done
	}
	f.memo[p] = false // a recursive call does not check by itself
	ok := len(f.checks(p)) > 0
	f.memo[p] = ok
	return ok
}

// intoVarargs reports whether st stores into the array that a variadic
// call's arguments are built in: a value passed to fmt, a logger or any
// ...any function is printed, not compared.
func intoVarargs(st *ssa.Store) bool {
	ia, ok := st.Addr.(*ssa.IndexAddr)
	if !ok {
		return false
	}
	_, ok = ia.X.(*ssa.Alloc)
	return ok && types.IsInterface(st.Val.Type())
}

// compared reports whether the count v is compared, or goes where this
// cannot follow.
func compared(v ssa.Value) bool {
	carries := func(r ssa.Instruction) bool {
		switch r := r.(type) {
		case *ssa.Extract:
			return r.Index == 0 // the count of (n, err)
		case *ssa.Phi, *ssa.Convert:
			return true
		}
		return false
	}
	return walkUses(v, carries, func(r ssa.Instruction, _ ssa.Value) bool {
		switch r := r.(type) {
		case *ssa.BinOp:
			switch r.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				return true
			}
		case *ssa.Extract:
			return false // the error of (n, err)
		case *ssa.Return, *ssa.Store, ssa.CallInstruction:
			return true
		}
		return false
	})
}

// used reports whether anything but debug information refers to v.
func used(v ssa.Value) bool {
	for _, r := range *v.Referrers() {
		if _, ok := r.(*ssa.DebugRef); !ok {
			return true
		}
	}
	return false
}
