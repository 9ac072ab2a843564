package clock

// This file follows labels through memory: stores and loads of locals,
// fields of structs (package-wide for a lease package) and globals.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// store records that v, labelled val, was stored at addr: in the local
// variable, array or slice it belongs to, or package-wide for a field or
// a global.
func (f *flow) store(addr, v ssa.Value, val labelled) bool {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		held := val
		if textual(v) {
			// A message or a name: not read back as a time, by the
			// package or by SQL that is given the struct whole.
			held = val.clockless()
		} else if f.c.fieldFlow {
			widen(f.c, f.c.fields, fieldKey{structOf(a.X.Type()), a.Field}, val)
		}
		whole := f.fieldStored(a, held)
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
// encoded input, its id). Nor does the struct carry it where it is given
// whole to SQL: the field is a description ("Successful in 1m2s"), a
// name or a payload, not a time that a statement compares.
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
// were stored from in this function (see fieldStored), as carried in
// its fields.
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
		return inFields(f.structs[a])
	}
}

// widen adds val's clock bits to m[k], and queues k's readers again when
// that changed anything.
func widen[K comparable](c *checker, m map[K]labelled, k K, val labelled) {
	val.l &= clockBits
	val.part &= clockBits
	if cur := m[k]; grew(cur, union(cur, val)) {
		m[k] = union(cur, val)
		c.changed(k)
	}
}

// part returns what a field of a struct labelled x derives from, besides
// what the field itself was stored from: where fields are not followed,
// all that x carries, its fields' clock as the field's own; in a lease
// package, where they are, only what x itself derives from (see
// labelled.field).
func (c *checker) part(x labelled) labelled {
	if !c.fieldFlow {
		x.part &^= clockBits
		x.psrcs = nil
		return x
	}
	return x.field()
}

// field returns what field i of the struct that x is, or points to, holds
// at: what the package stored in the field, and what the struct itself
// derives from (see checker.part). Stores into the field in this function
// add to the field's address (see store).
func (f *flow) field(x ssa.Value, i int, at ssa.Instruction) labelled {
	return union(f.c.part(f.get(x, at)), f.c.field(fieldKey{structOf(x.Type()), i}))
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
		return f.vals[a] // see field
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
