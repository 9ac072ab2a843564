package clock

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// facts computes and exports the facts of a package that is no lease
// package, building SSA bodies only for the functions they can come from.
//
// A fact derives from a clock read, an SQL call or a call of another
// package's function with a fact (a source); the dataflow carries it from
// function to function through calls of the package's functions whose
// summary is not empty, and through package-level variables that hold a
// clock value. Every other function keeps an empty summary however it is
// built, so it needs no body.
//
// Fields are not followed here, only in lease packages: fields are tracked
// per struct type, so a fact through a field would mark every getter of
// every struct that ever held a time somewhere in its package
// ((*http.Request).Referer, the Marshal methods of every Kubernetes type),
// and those facts would spread to every caller, making the facts noise
// and their cost the analysis of most of the dependency graph. What is
// lost is a helper returning a field that another of its package's
// functions set from the clock.
//
// The first round builds only the functions that name a source (in most
// packages a few: time.Now timing a call is everywhere) and runs the
// dataflow; most such functions turn out to give nothing, and the package
// is done. When some summary is not empty, or some variable holds a clock
// value, the next round adds, without waiting for the dataflow, everything
// that can be reached from them by name: the functions that call them, the
// functions that read the variables those store, their callers, and so
// on. A round rebuilds every body kept, so reaching far in one round costs
// less than one round per step of a long call chain. Rounds go on until
// nothing is added.
func (c *checker) facts(build *lazyssa.SSA) {
	ix := c.index()
	keep := make(map[*ast.FuncDecl]bool)
	for _, u := range ix.units {
		if u.seed {
			keep[u.decl] = true
		}
	}
	vars := ix.initSeed // build the initial values of package-level variables
	if len(keep) == 0 && !vars {
		return
	}
	for {
		c.summarize(build.Only(func(d *ast.FuncDecl) bool { return keep[d] }, vars))
		grew := false
		var add func([]*unit)
		add = func(us []*unit) {
			for _, u := range us {
				if u.decl == nil {
					grew = grew || !vars
					vars = true
					continue
				}
				if keep[u.decl] {
					continue
				}
				keep[u.decl] = true
				grew = true
				// Its callers, and the readers of what it stores, too.
				if fn, ok := c.pass.TypesInfo.Defs[u.decl.Name].(*types.Func); ok {
					add(ix.callers[fn])
				}
				for _, v := range c.stores(u) {
					add(ix.readers[v])
				}
			}
		}
		for fn, s := range c.sums {
			if obj, ok := fn.Object().(*types.Func); ok && (s.returns != nil || s.sql) {
				add(ix.callers[obj.Origin()])
			}
		}
		for g, l := range c.globals {
			if v, ok := g.Object().(*types.Var); ok && l.l&clockBits != 0 {
				add(ix.readers[v.Origin()])
			}
		}
		if !grew {
			break
		}
	}
	c.export()
}

// A unit is a function declaration with a body, its function literals
// included, or, with a nil decl, the package initialiser (the initial
// values of package-level variables).
type unit struct {
	decl *ast.FuncDecl
	seed bool // names a source
}

// index is who names what in a package.
type index struct {
	units    []*unit                 // the function declarations with bodies
	initSeed bool                    // the package initialiser names a source
	callers  map[*types.Func][]*unit // the units that name a function of the package
	readers  map[*types.Var][]*unit  // the units that name a package-level variable
}

// index reads the package's identifiers once.
func (c *checker) index() *index {
	ix := &index{
		callers: make(map[*types.Func][]*unit),
		readers: make(map[*types.Var][]*unit),
	}
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Body != nil {
				ix.units = append(ix.units, &unit{decl: d})
			}
		}
	}
	slices.SortFunc(ix.units, func(a, b *unit) int { return cmp.Compare(a.decl.Pos(), b.decl.Pos()) })
	init := &unit{}
	of := func(pos token.Pos) *unit {
		i, found := slices.BinarySearchFunc(ix.units, pos, func(u *unit, p token.Pos) int { return cmp.Compare(u.decl.Pos(), p) })
		if !found {
			i--
		}
		if i >= 0 && pos < ix.units[i].decl.End() {
			return ix.units[i]
		}
		return init
	}
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
			u.seed = u.seed || seed
			if local {
				ix.callers[fn] = append(ix.callers[fn], u)
			}
		case *types.Var:
			if global(obj) {
				ix.readers[obj] = append(ix.readers[obj], of(id.Pos()))
			}
		}
	}
	ix.initSeed = init.seed
	return ix
}

// global reports whether v is a package-level variable (of any package).
func global(v *types.Var) bool {
	return v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}

// source reports whether naming fn may give a value a clock label or run
// SQL: fn reads the clock, executes SQL, or is another package's function
// with a fact that says it returns a clock value or executes SQL.
func (c *checker) source(fn *types.Func) bool {
	if _, ok := c.clockRead(fn); ok || sqlcall.Method(fn) || sqltext.BuilderMethod(fn) || c.sqlInterfaceMethod(fn) {
		return true
	}
	return fn.Pkg() != nil && fn.Pkg() != c.pass.Pkg &&
		(c.pass.ImportObjectFact(fn, new(ReturnsClock)) || c.pass.ImportObjectFact(fn, new(ExecutesSQL)))
}

// stores returns the package-level variables that u may store a value
// into: those it assigns or takes the address of.
func (c *checker) stores(u *unit) []*types.Var {
	var out []*types.Var
	add := func(e ast.Expr) {
		var id *ast.Ident
		switch e := ast.Unparen(e).(type) {
		case *ast.Ident:
			id = e
		case *ast.SelectorExpr:
			id = e.Sel // another package's variable
		default:
			return
		}
		if v, ok := c.pass.TypesInfo.ObjectOf(id).(*types.Var); ok && global(v) {
			out = append(out, v)
		}
	}
	ast.Inspect(u.decl.Body, func(n ast.Node) bool {
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
		}
		return true
	})
	return out
}
