package imports

// This file finds where a package uses a banned package's client API
// (http.Client.Do, http.DefaultClient, an SDK's client), as opposed to
// importing it for its types or a server.

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// api is the part of a package's API that makes network calls.
type api struct {
	kind  kind
	funcs map[string]bool // package-level functions and variables
	types map[string]bool // types whose methods, literals and fields count
}

// clientAPI lists, by package, the client APIs: using one of them is what
// makes a package that imports net/http, http2 or grpc a client. Building a
// request (http.NewRequest) is not a call, and neither are the types that
// servers, handlers and error codes use.
var clientAPI = map[string]api{
	"net/http": {httpClient,
		set("Get", "Head", "Post", "PostForm", "DefaultClient", "DefaultTransport"),
		set("Client", "Transport")},
	"golang.org/x/net/http2": {httpClient,
		set("ConfigureTransport", "ConfigureTransports"),
		set("Transport", "ClientConn")},
	"google.golang.org/grpc": {rpcClient,
		set("Dial", "DialContext", "NewClient", "Invoke", "NewClientStream"),
		set("ClientConn", "ClientConnInterface")},
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// use is a package's use of a client API.
type use struct {
	target string    // the API's package
	what   string    // what is used, as the user would write it: http.Client.Do
	pos    token.Pos // where
	call   bool      // a function or method: named in preference to other uses
}

// uses holds, per kind of client, one use: the first call in file order,
// else the first other use.
type uses map[kind]use

func (us uses) add(k kind, u use) {
	if cur, ok := us[k]; !ok || u.call && !cur.call {
		us[k] = u
	}
}

// clientUses returns the uses of a client API in pass's package: in all
// its files, and in the files that keep, for the lease path. Only packages
// that import net/http, http2 or grpc, or a package under them
// (httptest's Server.Client), are searched: a method call on an
// *http.Client that another package returned, in a package that imports
// none of them, goes unseen.
func (r *rule) clientUses(pass *analysis.Pass, keep func(*ast.File) bool) (all, kept uses) {
	if !slices.ContainsFunc(pass.Pkg.Imports(), func(p *types.Package) bool {
		b := r.bans.match(p.Path())
		return b != nil && b.onUse
	}) {
		return nil, nil
	}
	all, kept = make(uses), make(uses)
	for _, f := range pass.Files {
		k := keep(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if u, kd := useAt(pass.TypesInfo, n); kd != "" {
				all.add(kd, u)
				if k {
					kept.add(kd, u)
				}
			}
			return true
		})
	}
	return all, kept
}

// useAt returns the use of a client API that n is, if any, and its kind:
// a function or variable of the API, a method of one of its types, a
// composite literal or new of such a type, or a field of such a type or
// whose type it is. A type named in a signature or a declaration is not a
// use.
func useAt(info *types.Info, n ast.Node) (use, kind) {
	switch n := n.(type) {
	case *ast.Ident:
		fn, isFunc := info.Uses[n].(*types.Func)
		if isFunc && fn.Signature().Recv() != nil {
			if named := typesx.RecvNamed(fn); named != nil {
				if a, name := apiType(named); a != nil {
					return use{a.pkg, name + "." + fn.Name(), n.Pos(), true}, a.kind
				}
			}
			return use{}, ""
		}
		obj := info.Uses[n]
		if obj == nil || obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
			return use{}, ""
		}
		if a := clientAPI[obj.Pkg().Path()]; a.funcs[obj.Name()] {
			return use{obj.Pkg().Path(), obj.Pkg().Name() + "." + obj.Name(), n.Pos(), isFunc}, a.kind
		}
	case *ast.CompositeLit:
		if a, name := apiType(info.TypeOf(n)); a != nil {
			return use{a.pkg, name, n.Pos(), false}, a.kind
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "new" {
				if a, name := apiType(info.TypeOf(n)); a != nil {
					return use{a.pkg, name, n.Pos(), false}, a.kind
				}
			}
		}
	case *ast.SelectorExpr:
		sel := info.Selections[n]
		if sel == nil || sel.Kind() != types.FieldVal {
			return use{}, ""
		}
		if a, name := apiType(fieldOwner(sel)); a != nil {
			return use{a.pkg, name + "." + sel.Obj().Name(), n.Sel.Pos(), false}, a.kind
		}
		if a, name := apiType(sel.Obj().Type()); a != nil {
			return use{a.pkg, name, n.Sel.Pos(), false}, a.kind
		}
	}
	return use{}, ""
}

// apiTypeOf says which client API a type belongs to.
type apiTypeOf struct {
	pkg  string
	kind kind
}

// apiType returns the client API that t (or *t) belongs to, and its name
// as the user writes it (http.Client), or nil.
func apiType(t types.Type) (*apiTypeOf, string) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return nil, ""
	}
	pkg := named.Obj().Pkg()
	a := clientAPI[pkg.Path()]
	if !a.types[named.Obj().Name()] {
		return nil, ""
	}
	return &apiTypeOf{pkg.Path(), a.kind}, pkg.Name() + "." + named.Obj().Name()
}

// fieldOwner returns the type whose struct declares the field that sel
// selects, following embedded fields: T for x.F where F is T's field
// promoted into x's type.
func fieldOwner(sel *types.Selection) types.Type {
	t := sel.Recv()
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		s, ok := t.Underlying().(*types.Struct)
		if !ok {
			return nil
		}
		t = s.Field(i).Type()
	}
	return t
}
