package clock

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// sqlDirective marks an interface whose methods execute SQL, in the
// interface's doc comment, on a line of its own:
//
//	// Querier runs the application's queries.
//	//
//	//leaseguard:sql
//	type Querier interface { ... }
const sqlDirective = "//leaseguard:sql"

// SQLInterface is the fact that an interface's methods execute SQL (those
// that may send a statement by their signature: see [sqlcall.Sends]): its
// declaration carries //leaseguard:sql.
type SQLInterface struct {
	Directive bool // marked by the directive (gob needs a field)
}

// AFact marks SQLInterface as a fact.
func (*SQLInterface) AFact() {}

func (*SQLInterface) String() string { return "executes SQL" }

// markedInterfaces reads the //leaseguard:sql directives of the package's
// files, reports those that are malformed or mark no interface type, and
// exports a fact for each interface they mark.
func (c *checker) markedInterfaces() {
	for _, f := range c.pass.Files {
		var directives []*ast.Comment
		for _, g := range f.Comments {
			for _, cm := range g.List {
				rest, ok := strings.CutPrefix(cm.Text, sqlDirective)
				if ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') { // not //leaseguard:sqlx
					directives = append(directives, cm)
				}
			}
		}
		if len(directives) == 0 {
			continue // most files: no doc comment needs reading
		}
		docs := make(map[*ast.Comment]*types.TypeName)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if doc == nil {
					continue
				}
				obj, _ := c.pass.TypesInfo.Defs[ts.Name].(*types.TypeName)
				for _, cm := range doc.List {
					docs[cm] = obj
				}
			}
		}
		for _, cm := range directives {
			c.markInterface(cm, strings.TrimSpace(cm.Text[len(sqlDirective):]), docs)
		}
	}
}

func (c *checker) markInterface(cm *ast.Comment, args string, docs map[*ast.Comment]*types.TypeName) {
	bad := func(format string, args ...any) {
		c.pass.Report(analysis.Diagnostic{Pos: cm.Pos(), End: cm.End(), Category: Name, Message: fmt.Sprintf(format, args...)})
	}
	obj, inDoc := docs[cm]
	switch {
	case !inDoc:
		bad("misplaced //leaseguard:sql: it must be in the doc comment of an interface type, or it marks nothing")
	case obj == nil || !types.IsInterface(obj.Type()):
		bad("//leaseguard:sql on %s, which is no interface: it marks interfaces whose methods execute SQL", docName(obj))
	case args != "":
		bad("//leaseguard:sql takes nothing after it: want //leaseguard:sql on a line of its own")
	default:
		c.pass.ExportObjectFact(obj, &SQLInterface{Directive: true})
	}
}

func docName(obj *types.TypeName) string {
	if obj == nil {
		return "a type"
	}
	return obj.Name()
}

// sqlInterfaceMethod reports whether fn is a method of an interface that
// executes SQL (one named by -clock.sql-interfaces, one whose declaration
// carries //leaseguard:sql, in this package or another, or a database
// handle by its own methods, see [sqlcall.Database]) that may send a
// statement by its signature (see [sqlcall.Sends]).
func (c *checker) sqlInterfaceMethod(fn *types.Func) bool {
	if fn == nil {
		return false
	}
	return c.sqlInterface(typesx.RecvNamed(fn)) && sqlcall.Sends(fn)
}

// sqlInterface reports whether named is an interface that executes SQL.
func (c *checker) sqlInterface(named *types.Named) bool {
	_, ok := c.sqlInterfaceWhy(named)
	return ok
}

// sqlInterfaceWhy says why named is an interface that executes SQL: the
// setting, the directive, or the method that makes it a database handle.
func (c *checker) sqlInterfaceWhy(named *types.Named) (string, bool) {
	if named == nil || !types.IsInterface(named) {
		return "", false
	}
	obj := named.Origin().Obj()
	if obj.Pkg() == nil {
		return "", false
	}
	if c.interfaces[obj.Pkg().Path()+"."+obj.Name()] {
		return "-clock.sql-interfaces names it", true
	}
	if c.pass.ImportObjectFact(obj, new(SQLInterface)) {
		return "its declaration carries //leaseguard:sql", true
	}
	// Without a setting: an interface that is a database handle by its
	// own methods (a raw Exec beside LeaderAttemptReelect, writes that
	// return sql.Result).
	iface, _ := named.Underlying().(*types.Interface)
	if iface == nil {
		return "", false
	}
	return sqlcall.Database(iface)
}

// sqlInterfaceCall returns the method that call invokes on an interface
// that executes SQL, or nil: the method is declared by such an interface,
// or the value it is called on has such a type (the method may come from
// an interface it embeds); either way the method may send a statement by
// its signature. Now() time.Time of a clock that the interface embeds is
// not one: it reads the clock. Under -lease.explain the interface is
// recorded, to be listed.
func (c *checker) sqlInterfaceCall(call *ssa.CallCommon, at token.Pos) *types.Func {
	if !call.IsInvoke() {
		return nil
	}
	var named *types.Named
	switch {
	case c.sqlInterfaceMethod(call.Method):
		named = typesx.RecvNamed(call.Method)
	default:
		named, _ = call.Value.Type().(*types.Named)
		if !c.sqlInterface(named) || !sqlcall.Sends(call.Method) {
			return nil
		}
	}
	if c.explained != nil && !sqlcall.Driver(named.Obj().Pkg()) {
		// A driver's interfaces (pgx.Tx) are SQL by name: not listed.
		obj := named.Origin().Obj()
		if _, ok := c.explained[obj]; !ok {
			c.explained[obj] = at
		}
	}
	return call.Method
}

// explain lists, under -lease.explain, the interfaces whose method calls
// the rule took for SQL calls, each at its first such call, and why.
func (c *checker) explain() {
	objs := slices.Collect(maps.Keys(c.explained))
	slices.SortFunc(objs, func(a, b *types.TypeName) int { return cmp.Compare(c.explained[a], c.explained[b]) })
	for _, obj := range objs {
		why, _ := c.sqlInterfaceWhy(obj.Type().(*types.Named))
		c.pass.Report(analysis.Diagnostic{Pos: c.explained[obj], Category: lease.ExplainCategory,
			Message: fmt.Sprintf("explain: the methods of %s.%s that may send a statement are taken for SQL calls: %s", obj.Pkg().Name(), obj.Name(), why)})
	}
}
