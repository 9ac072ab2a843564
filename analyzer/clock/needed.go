package clock

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/leaseguard/leaseguard/analyzer/sqlcall"
)

// A unit is a part of the package that the dataflow summarises on its own:
// a function declaration with a body (its function literals included), or
// the package initialiser (the initial values of package-level variables).
type unit struct {
	decl   *ast.FuncDecl // nil for the package initialiser
	seed   bool          // names a clock read, an SQL method or a function with a fact
	calls  []*types.Func // functions of this package that it names
	reads  []*types.Var  // fields and package-level variables that it names
	needed bool
}

// needed returns the function declarations of a package that is no lease
// package whose SSA form the dataflow needs, and whether it needs the SSA
// form at all (the package initialiser may be the only unit that matters).
// It is called once mayMatter found a source in the package.
//
// In such a package the dataflow only computes facts, and a fact derives
// from a clock read, an SQL call or a call of a function with a fact; the
// dataflow carries them from function to function through calls of the
// package's functions and through fields and package-level variables
// stored in one function and loaded in another. So a unit is needed when it
// names one of those sources, names a needed function of the package, or
// names a field or variable that a needed unit may store. Everything else
// keeps an empty summary however it is built, and is left without a body.
//
// Only identifiers are read (the package's Uses, one pass), and the
// syntax of needed units for what they store.
func (c *checker) needed() (map[*ast.FuncDecl]bool, bool) {
	units, of := c.units()
	init := &unit{}
	callers := make(map[*types.Func][]*unit)
	readers := make(map[*types.Var][]*unit)
	for id, obj := range c.pass.TypesInfo.Uses {
		switch obj := obj.(type) {
		case *types.Func:
			fn := obj.Origin()
			local := fn.Pkg() == c.pass.Pkg
			seed := c.source(fn)
			if !seed && !local {
				continue
			}
			u := of(id.Pos())
			if u == nil {
				u = init
			}
			u.seed = u.seed || seed
			if local {
				callers[fn] = append(callers[fn], u)
			}
		case *types.Var:
			v := obj.Origin()
			if !cell(v) {
				continue
			}
			u := of(id.Pos())
			if u == nil {
				u = init
			}
			readers[v] = append(readers[v], u)
		}
	}

	// Spread from the seeds: to the callers of a needed function, and to
	// the readers of what a needed unit stores.
	decls := make(map[*types.Func]*unit, len(units))
	for _, u := range units {
		if fn, ok := c.pass.TypesInfo.Defs[u.decl.Name].(*types.Func); ok {
			decls[fn] = u
		}
	}
	tainted := make(map[*types.Var]bool)
	var work []*unit
	need := func(u *unit) {
		if !u.needed {
			u.needed = true
			work = append(work, u)
		}
	}
	for _, u := range append(units, init) {
		if u.seed {
			need(u)
		}
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		if u.decl != nil {
			if fn, ok := c.pass.TypesInfo.Defs[u.decl.Name].(*types.Func); ok {
				for _, caller := range callers[fn] {
					need(caller)
				}
			}
		}
		for _, v := range c.stores(u) {
			if !tainted[v] {
				tainted[v] = true
				for _, r := range readers[v] {
					need(r)
				}
			}
		}
	}

	keep := make(map[*ast.FuncDecl]bool)
	for _, u := range units {
		if u.needed {
			keep[u.decl] = true
		}
	}
	return keep, len(keep) > 0 || init.needed
}

// source reports whether naming fn may give a value a clock label or run
// SQL: fn reads the clock, executes SQL, or is another package's function
// with a fact that says it returns a clock value or executes SQL.
func (c *checker) source(fn *types.Func) bool {
	if _, ok := c.clockRead(fn); ok || sqlcall.Method(fn) {
		return true
	}
	return fn.Pkg() != nil && fn.Pkg() != c.pass.Pkg &&
		(c.pass.ImportObjectFact(fn, new(ReturnsClock)) || c.pass.ImportObjectFact(fn, new(ExecutesSQL)))
}

// cell reports whether v outlives a function: a field or a package-level
// variable, whose labels the dataflow keeps package-wide.
func cell(v *types.Var) bool {
	return v.IsField() || (v.Pkg() != nil && v.Parent() == v.Pkg().Scope())
}

// units returns the package's function declarations with bodies, and a
// lookup of the one that holds a position (nil: none, the initialiser).
func (c *checker) units() ([]*unit, func(token.Pos) *unit) {
	var units []*unit
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Body != nil {
				units = append(units, &unit{decl: d})
			}
		}
	}
	slices.SortFunc(units, func(a, b *unit) int { return cmp.Compare(a.decl.Pos(), b.decl.Pos()) })
	return units, func(pos token.Pos) *unit {
		i, found := slices.BinarySearchFunc(units, pos, func(u *unit, p token.Pos) int { return cmp.Compare(u.decl.Pos(), p) })
		if !found {
			i--
		}
		if i >= 0 && pos < units[i].decl.End() {
			return units[i]
		}
		return nil
	}
}

// stores returns the fields and package-level variables that u may store
// a value into: those it assigns or takes the address of, every field of
// the struct types it writes as composite literals, and, for the package
// initialiser, the variables it initialises.
func (c *checker) stores(u *unit) []*types.Var {
	var out []*types.Var
	add := func(e ast.Expr) {
		var id *ast.Ident
		switch e := ast.Unparen(e).(type) {
		case *ast.Ident:
			id = e
		case *ast.SelectorExpr:
			id = e.Sel
		default:
			return
		}
		if v, ok := c.pass.TypesInfo.ObjectOf(id).(*types.Var); ok && cell(v.Origin()) {
			out = append(out, v.Origin())
		}
	}
	visit := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				add(l)
			}
		case *ast.IncDecStmt:
			add(n.X)
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				if n.Key != nil {
					add(n.Key)
				}
				if n.Value != nil {
					add(n.Value)
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				add(n.X)
			}
		case *ast.CompositeLit:
			if s, ok := c.pass.TypesInfo.TypeOf(n).Underlying().(*types.Struct); ok {
				for i := range s.NumFields() {
					out = append(out, s.Field(i).Origin())
				}
			}
		}
		return true
	}
	if u.decl != nil {
		ast.Inspect(u.decl.Body, visit)
		return out
	}
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				s := spec.(*ast.ValueSpec)
				if len(s.Values) == 0 {
					continue
				}
				for _, name := range s.Names {
					add(name)
				}
				for _, v := range s.Values {
					ast.Inspect(v, visit)
				}
			}
		}
	}
	return out
}
