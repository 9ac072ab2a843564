package fence

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
)

// Renews is the fact that a function renews its holder's lease and returns
// the renewal's failure as its error result: a store's UpdateLease, or an
// interface method that such a function implements.
type Renews struct{}

// AFact marks Renews as a fact.
func (*Renews) AFact() {}

func (*Renews) String() string { return "renews a lease" }

// renewers returns the functions of the package that renew their holder's
// lease and return the failure as an error: they send the renewal, or
// return the error of a call of one (Extend, which runs ExtendTx in a
// transaction); and the methods of the package's interfaces that one of
// them implements. It exports a fact on each, for the packages that call
// them.
func (c *checker) renewers(funcs []*ssa.Function, sites []*site) map[*types.Func]bool {
	out := make(map[*types.Func]bool)
	mark := func(fn *ssa.Function) bool {
		for fn.Parent() != nil {
			fn = fn.Parent() // the function that a literal is written in
		}
		obj, ok := fn.Object().(*types.Func)
		if !ok || out[obj] || errorResult(obj.Signature()) < 0 {
			return false
		}
		out[obj] = true
		return true
	}
	for _, s := range sites {
		if slices.ContainsFunc(s.stmts, func(ss sent) bool { return ss.st.renews }) {
			mark(s.call.Parent())
		}
	}
	for grew := true; grew; {
		grew = false
		for _, fn := range funcs {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					call, ok := instr.(*ssa.Call)
					if !ok {
						continue
					}
					if obj := sqlcall.Callee(call.Common()); obj != nil && c.renewer(obj, out) && returned(failure(call, obj)) {
						grew = mark(fn) || grew
					}
				}
			}
		}
	}
	// The package's interfaces whose method a renewer implements: the
	// caller holds the interface (a LockStore), not the store.
	scope := c.pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		iface, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for m := range iface.Methods() {
			for r := range out {
				recv := r.Signature().Recv()
				if r.Name() != m.Name() || recv == nil || types.IsInterface(recv.Type()) {
					continue
				}
				if types.Implements(recv.Type(), iface) || types.Implements(types.NewPointer(recv.Type()), iface) {
					out[m] = true
				}
			}
		}
	}
	for obj := range out {
		c.pass.ExportObjectFact(obj, new(Renews))
	}
	return out
}

// errorResult returns the index of sig's last result when it is an error,
// or -1.
func errorResult(sig *types.Signature) int {
	n := sig.Results().Len()
	if n == 0 || !types.Identical(sig.Results().At(n-1).Type(), types.Universe.Lookup("error").Type()) {
		return -1
	}
	return n - 1
}

// checkRenewalFailures reports each call of a renewer whose error is
// discarded, or only logged on a path that goes on as before: a holder
// whose renewal failed may have lost the lease, and the work it guards
// goes on unguarded. A failure that is returned, stored, sent, handed to
// code of the package, or on whose path the function returns, panics,
// cancels or changes state counts as handled. So does a renewal's own
// error where the function that sends it does not return it (a heartbeat
// goroutine that renews in a loop).
func (c *checker) checkRenewalFailures(funcs []*ssa.Function, local map[*types.Func]bool, sites []*site) {
	for _, s := range sites {
		call, ok := s.call.(*ssa.Call)
		if !ok || c.skipped(call.Pos()) || !slices.ContainsFunc(s.stmts, func(ss sent) bool { return ss.st.renews }) {
			continue
		}
		if err := failure(call, s.fn); err != nil && used(err) && !returned(err) {
			c.checkRenewalFailure(call, s.fn, "this renewal")
		}
	}
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(*ssa.Call)
				if !ok || c.skipped(call.Pos()) {
					continue
				}
				obj := sqlcall.Callee(call.Common())
				if obj == nil || !c.renewer(obj, local) {
					continue
				}
				c.checkRenewalFailure(call, obj, "renewal "+renewalName(obj))
			}
		}
	}
}

// renewer reports whether obj renews a lease: a function of the package
// in local, one that a fact marks, or a method of an interface of the
// package's own that a method with such a fact implements (a manager's
// DB interface that the sqlc package's Queries satisfies).
func (c *checker) renewer(obj *types.Func, local map[*types.Func]bool) bool {
	if local[obj] || obj.Pkg() != c.pass.Pkg && c.pass.ImportObjectFact(obj, new(Renews)) {
		return true
	}
	recv := obj.Signature().Recv()
	if recv == nil || !types.IsInterface(recv.Type()) {
		return false
	}
	iface := recv.Type().Underlying().(*types.Interface)
	if c.importedRenewers == nil {
		c.importedRenewers = make(map[string][]*types.Func)
		for _, f := range c.pass.AllObjectFacts() {
			if _, ok := f.Fact.(*Renews); !ok {
				continue
			}
			if fn, ok := f.Object.(*types.Func); ok && fn.Signature().Recv() != nil && !types.IsInterface(fn.Signature().Recv().Type()) {
				c.importedRenewers[fn.Name()] = append(c.importedRenewers[fn.Name()], fn)
			}
		}
	}
	for _, fn := range c.importedRenewers[obj.Name()] {
		t := fn.Signature().Recv().Type()
		if types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface) {
			return true
		}
	}
	return false
}

// failure returns the error result of call, a call of obj, or nil where it
// is not kept.
func failure(call *ssa.Call, obj *types.Func) ssa.Value {
	i := errorResult(obj.Signature())
	if i < 0 {
		return nil
	}
	if obj.Signature().Results().Len() == 1 {
		return call
	}
	for _, r := range *call.Referrers() {
		if e, ok := r.(*ssa.Extract); ok && e.Index == i {
			return e
		}
	}
	return nil
}

// returned reports whether the error v is returned by its function, as it
// is or wrapped (fmt.Errorf with %w, errors.Join).
func returned(v ssa.Value) bool {
	if v == nil {
		return false
	}
	carries := func(r ssa.Instruction) bool {
		switch r.(type) {
		case *ssa.Phi, *ssa.MakeInterface, *ssa.ChangeInterface, *ssa.ChangeType:
			return true
		}
		return false
	}
	return walkUses(v, carries, func(r ssa.Instruction, _ ssa.Value) bool {
		switch r := r.(type) {
		case *ssa.Return:
			return true
		case *ssa.Store:
			// An argument of fmt.Errorf or errors.Join, in its variadic
			// array: the call's error is the wrapped one.
			if ia, ok := r.Addr.(*ssa.IndexAddr); ok && intoVarargs(r) {
				for _, u := range *ia.X.Referrers() {
					if sl, ok := u.(*ssa.Slice); ok {
						for _, w := range *sl.Referrers() {
							if call, ok := w.(*ssa.Call); ok && errorResult(call.Common().Signature()) >= 0 && returned(call) {
								return true
							}
						}
					}
				}
			}
		}
		return false
	})
}

// checkRenewalFailure reports call, a call of obj that renews a lease,
// named in the message as name, if its failure is discarded or only
// logged.
func (c *checker) checkRenewalFailure(call *ssa.Call, obj *types.Func, name string) {
	err := failure(call, obj)
	if err == nil || !used(err) {
		c.rep.Report(analysis.Diagnostic{Pos: call.Pos(), Message: fmt.Sprintf("the failure of %s is discarded: a holder whose renewal failed may have lost the lease, and the work it guards goes on; stop that work when a renewal fails", name)})
		return
	}
	failures, handled := errorUses(err)
	if handled {
		return
	}
	for _, start := range failures {
		if reacts(start) {
			return
		}
	}
	how := "is only logged"
	if len(failures) > 0 && !slices.ContainsFunc(failures, logs) {
		how = "is ignored" // tested, on a path that neither acts nor prints: a heartbeat that returns and tells no one
	}
	c.rep.Report(analysis.Diagnostic{Pos: call.Pos(), Message: fmt.Sprintf("the failure of %s %s: a holder whose renewal failed may have lost the lease, and the work it guards goes on; stop that work when a renewal fails", name, how)})
}

// headsLoop reports whether b is a loop's head, which a failure path
// jumps straight back to (if err != nil { continue }): the blocks it
// dominates are the whole loop, not the failure's own path. (For reacts
// they are the path: skipping the rest of the loop, the work that
// follows the renewal, is acting on the failure.)
func headsLoop(b *ssa.BasicBlock) bool {
	return slices.ContainsFunc(b.Preds, b.Dominates)
}

// logs reports whether the path that starts at block start (the blocks it
// dominates) prints anything: a logger or fmt call. A start that heads a
// loop begins no path of its own (see headsLoop).
func logs(start *ssa.BasicBlock) bool {
	if headsLoop(start) {
		return false
	}
	for _, b := range start.Parent().Blocks {
		if !start.Dominates(b) {
			continue
		}
		for _, instr := range b.Instrs {
			if call, ok := instr.(*ssa.Call); ok && printing(call.Common()) {
				return true
			}
		}
	}
	return false
}

// renewalName names a renewer as its caller wrote it: store.LockStore.UpdateLease.
func renewalName(obj *types.Func) string {
	name := obj.Name()
	if recv := obj.Signature().Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			name = n.Obj().Name() + "." + name
		}
	}
	if obj.Pkg() != nil {
		name = obj.Pkg().Name() + "." + name
	}
	return name
}

// errorUses follows an error value: the first blocks of the paths on
// which a nil test finds it set, and whether it goes anywhere but a nil
// test, a log line or a message (handled).
func errorUses(v ssa.Value) (failures []*ssa.BasicBlock, handled bool) {
	carries := func(r ssa.Instruction) bool {
		switch r.(type) {
		case *ssa.MakeInterface, *ssa.ChangeType, *ssa.ChangeInterface:
			return true
		}
		return false
	}
	handled = walkUses(v, carries, func(r ssa.Instruction, v ssa.Value) bool {
		switch r := r.(type) {
		case *ssa.DebugRef:
		case *ssa.BinOp:
			if (r.Op != token.EQL && r.Op != token.NEQ) || !isNil(r.X) && !isNil(r.Y) {
				return true
			}
			for _, u := range *r.Referrers() {
				switch u := u.(type) {
				case *ssa.If:
					edge := 0 // err != nil: the true edge
					if r.Op == token.EQL {
						edge = 1
					}
					failures = append(failures, u.Block().Succs[edge])
				case *ssa.DebugRef:
				default:
					return true // the test's result goes further
				}
			}
		case *ssa.Store:
			return !intoVarargs(r)
		case *ssa.Call:
			return !printed(r, v)
		default:
			return true
		}
		return false
	})
	return failures, handled
}

func isNil(v ssa.Value) bool {
	k, ok := v.(*ssa.Const)
	return ok && k.IsNil()
}

// printed reports whether call, which takes v, only prints it: a logger
// or fmt call, a variadic ...any call whose result is unused, a method of
// v (err.Error()) or a function of another package whose result is only
// printed in turn (slog.Any, zap.Error).
func printed(call *ssa.Call, v ssa.Value) bool {
	common := call.Common()
	if common.IsInvoke() && common.Value == v {
		return onlyPrinted(call)
	}
	if printing(common) {
		return !used(call) || onlyPrinted(call)
	}
	fn := common.StaticCallee()
	if fn == nil || fn.Pkg == nil || fn.Blocks != nil && fn.Pkg.Pkg == call.Parent().Pkg.Pkg {
		return false // a function value, or code of the package: it may handle v
	}
	return used(call) && onlyPrinted(call)
}

// onlyPrinted reports whether every use of v is printing it.
func onlyPrinted(v ssa.Value) bool {
	_, handled := errorUses(v)
	return !handled
}

// printing reports whether common calls a logger or fmt: a function or
// method of a logging package, a method of a type named like a logger, or
// a function whose last parameter is ...any.
func printing(common *ssa.CallCommon) bool {
	obj := sqlcall.Callee(common)
	if obj == nil {
		return false
	}
	sig := obj.Signature()
	if sig.Variadic() {
		last := sig.Params().At(sig.Params().Len() - 1).Type().(*types.Slice).Elem()
		if types.IsInterface(last) && last.Underlying().(*types.Interface).Empty() {
			return true
		}
	}
	if obj.Pkg() != nil {
		switch obj.Pkg().Path() {
		case "log", "log/slog", "fmt", "github.com/sirupsen/logrus", "go.uber.org/zap", "github.com/rs/zerolog", "k8s.io/klog/v2", "github.com/go-logr/logr":
			return true
		}
	}
	if recv := sig.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok && strings.Contains(strings.ToLower(n.Obj().Name()), "log") {
			return true
		}
	}
	return false
}

// reacts reports whether the path that starts at block start (the blocks
// it dominates) does anything but print and wait: it returns something to
// its caller, panics, sends, starts or defers a call, stores outside its
// own variables, calls code that is not a logger, or hands a constant of
// its own to where the paths join (lost = true). A return from a function
// without results tells no one: the heartbeat that logs and returns ends,
// and the work it guarded goes on.
func reacts(start *ssa.BasicBlock) bool {
	for _, b := range start.Parent().Blocks {
		if !start.Dominates(b) {
			continue
		}
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Return:
				if len(in.Results) > 0 {
					return true
				}
			case *ssa.Panic, *ssa.Send, *ssa.Go, *ssa.Defer, *ssa.MapUpdate:
				return true
			case *ssa.Store:
				if a, ok := in.Addr.(*ssa.Alloc); !intoVarargs(in) && (!ok || a.Heap) {
					return true
				}
			case *ssa.Call:
				if !harmless(in) {
					return true
				}
			}
		}
		for _, succ := range b.Succs {
			if start.Dominates(succ) {
				continue
			}
			if setsFlag(succ, b) {
				return true
			}
		}
	}
	return false
}

// harmless reports whether call neither reacts nor hands its result on:
// it sleeps, prints, rolls back the renewal's transaction, or returns a
// value that is only printed.
func harmless(call *ssa.Call) bool {
	return waits(call.Common()) || printing(call.Common()) || rollsBack(call.Common()) || used(call) && onlyPrinted(call)
}

// rollsBack reports whether common rolls a transaction back: its Rollback
// method, or a function without results that the call which began the
// transaction returned beside it (tx, commit, rollback, err :=
// PrepareTx(…)). Cleaning up after a failed renewal is not acting on it.
func rollsBack(common *ssa.CallCommon) bool {
	if fn := sqlcall.Callee(common); fn != nil && fn.Name() == "Rollback" {
		recv := fn.Signature().Recv()
		return recv != nil && sqlcall.Transaction(recv.Type())
	}
	x, ok := common.Value.(*ssa.Extract)
	if !ok || common.IsInvoke() || common.Signature().Results().Len() > 0 {
		return false
	}
	begin, ok := x.Tuple.(*ssa.Call)
	if !ok {
		return false
	}
	results := begin.Common().Signature().Results()
	for i := range results.Len() {
		if i != x.Index && sqlcall.Transaction(results.At(i).Type()) {
			return true
		}
	}
	return false
}

// waits reports whether common sleeps: a retry waits, it does not react.
func waits(common *ssa.CallCommon) bool {
	fn := sqlcall.Callee(common)
	return fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "time" && fn.Name() == "Sleep"
}

// setsFlag reports whether the edge from pred into join hands a phi of join
// a constant that another edge does not (lost = true on the failure path).
func setsFlag(join, pred *ssa.BasicBlock) bool {
	i := slices.Index(join.Preds, pred)
	for _, instr := range join.Instrs {
		phi, ok := instr.(*ssa.Phi)
		if !ok {
			break
		}
		k, ok := phi.Edges[i].(*ssa.Const)
		if !ok {
			continue
		}
		for j, e := range phi.Edges {
			if o, ok := e.(*ssa.Const); j != i && ok && k.Value.String() != o.Value.String() {
				return true
			}
		}
	}
	return false
}
