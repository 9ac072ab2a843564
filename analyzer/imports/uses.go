package imports

// This file finds where a package uses a banned package's client API
// (http.Client.Do, http.DefaultClient, a websocket dialer, an HTTP/2
// framer on a connection it dials), as opposed to importing it for its
// types or a server.

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
	kind    kind
	funcs   map[string]bool // package-level functions and variables
	types   map[string]bool // types whose methods, literals and fields count
	methods map[string]bool // methods, as Type.Method, of types that servers use as well
	// onConn are functions and types (counted as funcs and types are)
	// that speak the protocol over a connection they are given, either
	// end's: they count in a package that dials one (see dialers).
	onConn map[string]bool
}

// clientAPI lists, by package, the client APIs: using one of them is what
// makes a package that imports net/http, http2, grpc or a websocket library
// a client. Building a request (http.NewRequest) or a websocket
// configuration is not a call, and neither are the types that servers,
// handlers and error codes use (http2.Server, an Upgrader, Accept).
var clientAPI = map[string]api{
	"net/http": {kind: httpClient,
		funcs: set("Get", "Head", "Post", "PostForm", "DefaultClient", "DefaultTransport"),
		types: set("Client", "Transport")},
	"golang.org/x/net/http2": {kind: httpClient,
		funcs:  set("ConfigureTransport", "ConfigureTransports"),
		types:  set("Transport", "ClientConn"),
		onConn: set("NewFramer", "Framer")},
	"google.golang.org/grpc": {kind: rpcClient,
		funcs: set("Dial", "DialContext", "NewClient", "Invoke", "NewClientStream"),
		types: set("ClientConn", "ClientConnInterface")},
	"github.com/gorilla/websocket": {kind: wsClient,
		funcs: set("DefaultDialer", "NewClient"),
		types: set("Dialer")},
	"github.com/coder/websocket": {kind: wsClient, funcs: set("Dial")},
	"nhooyr.io/websocket":        {kind: wsClient, funcs: set("Dial")},
	"golang.org/x/net/websocket": {kind: wsClient,
		funcs:   set("Dial", "DialConfig", "NewClient"),
		methods: set("Config.DialContext")},
}

// dialers lists, by package, the functions and methods (as Type.Method)
// that open a connection to another process: a package that calls one and
// speaks a protocol over a connection (http2.NewFramer) is a client.
var dialers = map[string]map[string]bool{
	"net":        set("Dial", "DialTimeout", "DialTCP", "Dialer.Dial", "Dialer.DialContext"),
	"crypto/tls": set("Dial", "DialWithDialer", "Dialer.Dial", "Dialer.DialContext"),
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
	kind   kind
	onConn bool // counts only in a package that dials (see api.onConn)
}

// uses holds, per package whose client API is used, one use: the first
// call in file order, else the first other use.
type uses map[string]use

func (us uses) add(u use) {
	if cur, ok := us[u.target]; !ok || u.call && !cur.call {
		us[u.target] = u
	}
}

// of returns the use that makes the import of path, banned by b, a
// client: a use of path's own API, else a use of the API of another
// package under b's prefix that the package does not import itself (the
// *http.Client of httptest's Server.Client, imported as
// net/http/httptest). A use is reported at the import of its own package
// where there is one: a lease package that calls http.DefaultClient is
// reported at net/http, not also at net/http/httptrace.
func (us uses) of(path string, b *ban, bans banList, direct map[string]bool) (use, bool) {
	if u, ok := us[path]; ok {
		return u, true
	}
	var best use
	found := false
	for _, u := range us {
		if direct[u.target] || bans.match(u.target) != b {
			continue
		}
		if !found || u.call && !best.call || u.call == best.call && u.pos < best.pos {
			best, found = u, true
		}
	}
	return best, found
}

// byKind returns, per kind of client, the use to name: a call before other
// uses, then the first in file order.
func (us uses) byKind() map[kind]use {
	out := make(map[kind]use)
	for _, u := range us {
		if cur, ok := out[u.kind]; !ok || u.call && !cur.call || u.call == cur.call && u.pos < cur.pos {
			out[u.kind] = u
		}
	}
	return out
}

// clientUses returns the uses of a client API in pass's package: in all
// its files, and in the files that keep, for the lease path. Only packages
// that import net/http, http2, grpc or a websocket library, or a package
// under them (httptest's Server.Client), are searched: a method call on an
// *http.Client that another package returned, in a package that imports
// none of them, goes unseen. An HTTP/2 framer counts where the package
// (for the lease path, its checked files) dials a connection (net.Dial, a
// tls.Dialer): a framer on a connection that a listener accepted, or that
// a caller passed in, serves or cannot be told from serving.
func (r *rule) clientUses(pass *analysis.Pass, keep func(*ast.File) bool) (all, kept uses) {
	if !slices.ContainsFunc(pass.Pkg.Imports(), func(p *types.Package) bool {
		b := r.bans.match(p.Path())
		return b != nil && b.onUse
	}) {
		return nil, nil
	}
	all, kept = make(uses), make(uses)
	var onConnAll, onConnKept []use
	dialsAll, dialsKept := false, false
	for _, f := range pass.Files {
		k := keep(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && dials(pass.TypesInfo, id) {
				dialsAll, dialsKept = true, dialsKept || k
			}
			u, ok := useAt(pass.TypesInfo, n)
			switch {
			case !ok:
			case u.onConn:
				onConnAll = append(onConnAll, u)
				if k {
					onConnKept = append(onConnKept, u)
				}
			default:
				all.add(u)
				if k {
					kept.add(u)
				}
			}
			return true
		})
	}
	for _, u := range onConnAll {
		if dialsAll {
			all.add(u)
		}
	}
	for _, u := range onConnKept {
		if dialsKept {
			kept.add(u)
		}
	}
	return all, kept
}

// dials reports whether id names a function or method that opens a
// connection to another process (see dialers).
func dials(info *types.Info, id *ast.Ident) bool {
	fn, ok := info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	name := fn.Name()
	if named := typesx.RecvNamed(fn); named != nil {
		name = named.Obj().Name() + "." + name
	}
	return dialers[fn.Pkg().Path()][name]
}

// useAt returns the use of a client API that n is, if any: a function or
// variable of the API, a method of one of its types or one of its
// methods, a composite literal or new of such a type, or a field of such
// a type or whose type it is. A type named in a signature or a
// declaration is not a use.
func useAt(info *types.Info, n ast.Node) (use, bool) {
	switch n := n.(type) {
	case *ast.Ident:
		fn, isFunc := info.Uses[n].(*types.Func)
		if isFunc && fn.Signature().Recv() != nil {
			named := typesx.RecvNamed(fn)
			if named == nil {
				return use{}, false
			}
			if a, name := apiType(named); a != nil {
				return use{a.pkg, name + "." + fn.Name(), n.Pos(), true, a.kind, a.onConn}, true
			}
			if pkg := named.Obj().Pkg(); pkg != nil {
				if a, ok := clientAPI[pkg.Path()]; ok && a.methods[named.Obj().Name()+"."+fn.Name()] {
					return use{pkg.Path(), pkg.Name() + "." + named.Obj().Name() + "." + fn.Name(), n.Pos(), true, a.kind, false}, true
				}
			}
			return use{}, false
		}
		obj := info.Uses[n]
		if obj == nil || obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
			return use{}, false
		}
		a, ok := clientAPI[obj.Pkg().Path()]
		if ok && (a.funcs[obj.Name()] || a.onConn[obj.Name()] && isFunc) {
			return use{obj.Pkg().Path(), obj.Pkg().Name() + "." + obj.Name(), n.Pos(), isFunc, a.kind, !a.funcs[obj.Name()]}, true
		}
	case *ast.CompositeLit:
		if a, name := apiType(info.TypeOf(n)); a != nil {
			return use{a.pkg, name, n.Pos(), false, a.kind, a.onConn}, true
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "new" {
				if a, name := apiType(info.TypeOf(n)); a != nil {
					return use{a.pkg, name, n.Pos(), false, a.kind, a.onConn}, true
				}
			}
		}
	case *ast.SelectorExpr:
		sel := info.Selections[n]
		if sel == nil || sel.Kind() != types.FieldVal {
			return use{}, false
		}
		if a, name := apiType(fieldOwner(sel)); a != nil {
			return use{a.pkg, name + "." + sel.Obj().Name(), n.Sel.Pos(), false, a.kind, a.onConn}, true
		}
		if a, name := apiType(sel.Obj().Type()); a != nil {
			return use{a.pkg, name, n.Sel.Pos(), false, a.kind, a.onConn}, true
		}
	}
	return use{}, false
}

// apiTypeOf says which client API a type belongs to.
type apiTypeOf struct {
	pkg    string
	kind   kind
	onConn bool // one of the API's onConn types
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
	name := named.Obj().Name()
	if !a.types[name] && !a.onConn[name] {
		return nil, ""
	}
	return &apiTypeOf{pkg.Path(), a.kind, !a.types[name]}, pkg.Name() + "." + name
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
