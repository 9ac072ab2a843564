package clock

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// clockRead reports whether calling fn reads the wall clock, and names it:
// time.Now, time.Since, time.Until; any function or method named Now whose
// only result is a time.Time (an injected clock); or one named by
// -clock.funcs.
func (c *checker) clockRead(fn *types.Func) (string, bool) {
	if fn == nil {
		return "", false
	}
	sig := fn.Signature()
	if fn.Pkg() != nil && fn.Pkg().Path() == "time" && sig.Recv() == nil {
		switch fn.Name() {
		case "Now", "Since", "Until":
			return "time." + fn.Name(), true
		}
	}
	if fn.Name() == "Now" && sig.Params().Len() == 0 && sig.Results().Len() == 1 && typesx.IsNamed(sig.Results().At(0).Type(), "time", "Time") {
		return shortName(fn), true
	}
	if len(c.extra) > 0 && fn.Pkg() != nil {
		key := fn.Pkg().Path() + "." + fn.Name()
		if named := typesx.RecvNamed(fn); named != nil {
			key = fn.Pkg().Path() + "." + named.Obj().Name() + "." + fn.Name()
		}
		if c.extra[key] {
			return shortName(fn), true
		}
	}
	return "", false
}

// clockFunc reports whether obj, used as a value (time.Now passed or
// stored), is a function that reads the clock.
func (c *checker) clockFunc(obj types.Object) (string, bool) {
	fn, ok := obj.(*types.Func)
	if !ok {
		return "", false
	}
	return c.clockRead(fn)
}

// schedules reports whether fn schedules rather than decides: timers,
// tickers, sleeps and context deadlines. Their results carry no clock value
// even when a clock value went in.
func schedules(fn *types.Func) bool {
	if fn == nil || fn.Pkg() == nil || fn.Signature().Recv() != nil {
		return false
	}
	switch fn.Pkg().Path() {
	case "time":
		switch fn.Name() {
		case "NewTimer", "NewTicker", "After", "AfterFunc", "Tick", "Sleep":
			return true
		}
	case "context":
		switch fn.Name() {
		case "WithDeadline", "WithDeadlineCause", "WithTimeout", "WithTimeoutCause":
			return true
		}
	}
	return false
}

// returnsClock returns the clock read that fn's result derives from, or "":
// from this package's summaries, or from a fact about another package's
// function. For a function of this package, it also returns the read
// itself.
func (c *checker) returnsClock(callee *ssa.Function, fn *types.Func) (string, *source) {
	if callee != nil {
		c.reads(callee)
		if s := c.sums[callee]; s != nil && s.returns != nil {
			return rootDesc(s.returns.desc), s.returns
		}
	}
	var fact ReturnsClock
	if fn != nil && fn.Pkg() != c.pass.Pkg && c.pass.ImportObjectFact(fn.Origin(), &fact) {
		return fact.Via, nil
	}
	return "", nil
}

// returnsTime reports whether a function of signature sig has a time as
// its only result: a clock of the package's own (now(), deadline()), each
// of whose calls is a read.
func returnsTime(sig *types.Signature) bool {
	res := sig.Results()
	if res.Len() != 1 {
		return false
	}
	t := res.At(0).Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "time" && named.Obj().Name() == "Time"
}

// takesWhole reports whether callee, which passes its parameter i to SQL,
// passes it as itself: a function of another package, or of a package
// whose fields are not followed, is taken to; a function of this lease
// package that passes only fields of it to SQL does not.
func (c *checker) takesWhole(callee *ssa.Function, i int) bool {
	if !c.fieldFlow || callee == nil || !c.local[callee] {
		return true
	}
	s := c.sums[callee]
	return s == nil || i >= 64 || s.wholes&(1<<i) != 0
}

// executesSQL returns what is known of fn's SQL, or nil.
func (c *checker) executesSQL(callee *ssa.Function, fn *types.Func) *ExecutesSQL {
	if callee != nil {
		c.reads(callee)
		if s := c.sums[callee]; s != nil && s.sql {
			return &ExecutesSQL{Params: s.params}
		}
	}
	var fact ExecutesSQL
	if fn != nil && fn.Pkg() != c.pass.Pkg && c.pass.ImportObjectFact(fn.Origin(), &fact) {
		return &fact
	}
	return nil
}
