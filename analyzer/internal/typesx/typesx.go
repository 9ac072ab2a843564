// Package typesx holds the small go/types queries that the rules share.
package typesx

import "go/types"

// Recv returns the type of fn's receiver with any pointer removed, or nil
// for a function that is not a method.
func Recv(fn *types.Func) types.Type {
	recv := fn.Signature().Recv()
	if recv == nil {
		return nil
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	return t
}

// RecvNamed returns the named type of fn's receiver (T for a method on T or
// *T), or nil.
func RecvNamed(fn *types.Func) *types.Named {
	named, _ := Recv(fn).(*types.Named)
	return named
}

// IsNamed reports whether t is the named type pkg.name.
func IsNamed(t types.Type, pkg, name string) bool {
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == pkg && named.Obj().Name() == name
}

// Deref returns what t points to, when it is a pointer, or t.
func Deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}
