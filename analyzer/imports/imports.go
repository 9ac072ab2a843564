// Package imports defines the imports rule: a lease package must not import
// an HTTP client or a model SDK, directly or transitively.
package imports

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Name is the rule's name: its analyzer name, flag prefix, diagnostic
// category and //leaseguard:allow name.
const Name = "imports"

const doc = `check that a lease package imports no HTTP client or model SDK

A lease package decides who may write. One that imports an HTTP client or a
model SDK hands that vendor a veto over leadership: its timeouts, refusals
and truncated responses decide whether a lease is renewed. The rule reports,
at the import in the lease package (test files included):

  - a direct import of a banned package (the curated list, plus -imports.ban);
  - an import whose dependencies reach a model SDK or a third-party HTTP,
    RPC or websocket client, with the shortest chain;
  - an import whose dependencies reach net/http or golang.org/x/net/http2
    where a package on the chain uses the client API (http.Client,
    http.Get, http.NewRequest, http2.Transport, ...). A chain that reaches
    net/http only for server-side types is reported only with
    -imports.strict.

Packages matching -imports.allow are never reported, and cut any chain
through them. Transitive imports travel as package facts: every package
exports the banned packages it reaches with one shortest chain each, so the
rule sees the same under go vet (which reads facts of direct imports only)
as under the standalone driver.`

// Reach is the fact that a package reaches banned packages: for each ban
// entry (and for client use of net/http) the shortest chain. Packages that
// reach nothing export no fact.
type Reach struct {
	Entries []Entry
}

// Entry is one banned package reached, and how.
type Entry struct {
	Target string   // the banned package reached
	Kind   string   // what it is: model SDK, HTTP client, ...
	Key    string   // the ban entry's prefix, or "use" for client use: one entry per key
	Chain  []string // packages from the fact's package to the target, target excluded
	Use    string   // for client use: what the last package on Chain uses, e.g. http.Client.Do
	OnUse  bool     // counts only with client use or in strict mode
}

// AFact marks Reach as a fact.
func (*Reach) AFact() {}

func (r *Reach) String() string {
	parts := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		parts[i] = e.Target + " via " + strings.Join(e.Chain, " -> ")
		if e.Use != "" {
			parts[i] += " (uses " + e.Use + ")"
		}
	}
	return "reaches " + strings.Join(parts, "; ")
}

// New returns the imports analyzer, with its flags bound to cfg.Imports.
// leaseAnalyzer is the analyzer from lease.New on the same cfg.
func New(cfg *config.Config, leaseAnalyzer *analysis.Analyzer) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      Name,
		Doc:       doc,
		URL:       "https://github.com/leaseguard/leaseguard#imports",
		Requires:  []*analysis.Analyzer{leaseAnalyzer},
		FactTypes: []analysis.Fact{new(Reach)},
	}
	cfg.Flags(Name, &a.Flags)
	// Flags are parsed before the first run, so the settings are final then.
	settings := sync.OnceValue(func() *rule {
		return &rule{bans: newBanList(cfg.Imports.Ban), allow: config.NewMatcher(cfg.Imports.Allow), strict: cfg.Imports.Strict}
	})
	a.Run = func(pass *analysis.Pass) (any, error) {
		settings().run(pass, pass.ResultOf[leaseAnalyzer].(*lease.Result))
		return nil, nil
	}
	return a
}

type rule struct {
	bans   banList
	allow  *config.Matcher
	strict bool
}

func (r *rule) run(pass *analysis.Pass, res *lease.Result) {
	// Every package, dependencies included, summarises what it reaches, so
	// that lease packages that import it can see through it.
	// A main package is imported by no one (the test main least of all).
	if pass.Pkg.Name() != "main" {
		if sum := r.summarize(pass); sum != nil {
			pass.ExportPackageFact(sum)
		}
	}
	if !res.Lease {
		return
	}
	rep := res.Reporter(pass, Name)
	for _, f := range pass.Files {
		for _, spec := range f.Imports {
			r.checkImport(pass, rep, spec)
		}
	}
	rep.Finish()
}

func (r *rule) checkImport(pass *analysis.Pass, rep *lease.Reporter, spec *ast.ImportSpec) {
	path, err := strconv.Unquote(spec.Path.Value)
	if err != nil || r.allow.Match(path) {
		return
	}
	if b := r.bans.match(path); b != nil {
		rep.ReportRangef(spec, "lease package imports %s %s: %s", b.kind, path, b.kind.why())
		return
	}
	pkgName := pass.TypesInfo.PkgNameOf(spec)
	if pkgName == nil {
		return // import "C", or an import that did not type-check
	}
	var reach Reach
	if !pass.ImportPackageFact(pkgName.Imported(), &reach) {
		return
	}
	used := slices.ContainsFunc(reach.Entries, func(e Entry) bool { return e.Use != "" })
	for _, e := range reach.Entries {
		if e.OnUse && (!r.strict || used) {
			continue // reported through its client-use entry, or not at all
		}
		via := strings.Join(e.Chain, " -> ")
		if e.Use != "" {
			via += fmt.Sprintf(" (%s uses %s)", e.Chain[len(e.Chain)-1], e.Use)
		}
		rep.ReportRangef(spec, "lease package imports %s %s via %s: %s", e.Kind, e.Target, via, kind(e.Kind).why())
	}
}

// summarize returns what pass's package reaches, or nil for nothing. A
// banned package summarises nothing: a chain ends at the first banned
// package on it. An allowed package summarises nothing: it cuts chains.
func (r *rule) summarize(pass *analysis.Pass) *Reach {
	self := pass.Pkg.Path()
	if r.allow.Match(self) || r.bans.match(self) != nil {
		return nil
	}
	best := make(map[string]Entry)
	add := func(e Entry) {
		if cur, ok := best[e.Key]; !ok || better(e, cur) {
			best[e.Key] = e
		}
	}
	for _, imp := range pass.Pkg.Imports() {
		path := imp.Path()
		if r.allow.Match(path) {
			continue
		}
		if b := r.bans.match(path); b != nil {
			add(Entry{Target: path, Kind: string(b.kind), Key: b.prefix, Chain: []string{self}, OnUse: b.onUse})
			continue
		}
		var reach Reach
		if pass.ImportPackageFact(imp, &reach) {
			for _, e := range reach.Entries {
				e.Chain = append([]string{self}, e.Chain...)
				add(e)
			}
		}
	}
	if target, use := clientUse(pass); use != "" {
		add(Entry{Target: target, Kind: string(httpClient), Key: "use", Chain: []string{self}, Use: use})
	}
	if len(best) == 0 {
		return nil
	}
	sum := &Reach{Entries: make([]Entry, 0, len(best))}
	for _, e := range best {
		sum.Entries = append(sum.Entries, e)
	}
	slices.SortFunc(sum.Entries, func(a, b Entry) int { return cmp.Compare(a.Key, b.Key) })
	return sum
}

// better orders entries by chain length, then by chain and target text, so
// that the entry kept does not depend on the order of imports.
func better(a, b Entry) bool {
	if len(a.Chain) != len(b.Chain) {
		return len(a.Chain) < len(b.Chain)
	}
	if c := slices.Compare(a.Chain, b.Chain); c != 0 {
		return c < 0
	}
	return a.Target < b.Target
}

// clientAPI lists, per package, the package-level objects and the types
// whose methods make outgoing requests.
var clientAPI = map[string]map[string]bool{
	"net/http": {
		"Client": true, "Transport": true, "DefaultClient": true, "DefaultTransport": true,
		"Get": true, "Head": true, "Post": true, "PostForm": true,
		"NewRequest": true, "NewRequestWithContext": true,
	},
	"golang.org/x/net/http2": {
		"Transport": true, "ClientConn": true, "ConfigureTransport": true, "ConfigureTransports": true,
	},
}

// clientUse returns the first use, in file order, of an HTTP client API in
// pass's package, preferring a call (a function or method) to a mention of
// a type or variable: the package used and a description such as
// http.Client.Do. Only packages that import net/http or http2 can have one.
func clientUse(pass *analysis.Pass) (target, use string) {
	if !slices.ContainsFunc(pass.Pkg.Imports(), func(p *types.Package) bool { return clientAPI[p.Path()] != nil }) {
		return "", ""
	}
	var mention [2]string
	for _, f := range pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || use != "" {
				return use == ""
			}
			obj := pass.TypesInfo.Uses[id]
			t, u := describe(obj)
			switch _, isFunc := obj.(*types.Func); {
			case u == "":
			case isFunc:
				target, use = t, u
			case mention[1] == "":
				mention = [2]string{t, u}
			}
			return use == ""
		})
		if use != "" {
			return target, use
		}
	}
	return mention[0], mention[1]
}

// describe names obj if it belongs to an HTTP client API.
func describe(obj types.Object) (target, use string) {
	if obj == nil || obj.Pkg() == nil {
		return "", ""
	}
	api := clientAPI[obj.Pkg().Path()]
	if api == nil {
		return "", ""
	}
	name := obj.Pkg().Name() + "." + obj.Name()
	if fn, ok := obj.(*types.Func); ok && fn.Signature().Recv() != nil {
		named := typesx.RecvNamed(fn)
		if named == nil || !api[named.Obj().Name()] {
			return "", ""
		}
		return obj.Pkg().Path(), obj.Pkg().Name() + "." + named.Obj().Name() + "." + obj.Name()
	}
	if obj.Parent() != obj.Pkg().Scope() || !api[obj.Name()] {
		return "", ""
	}
	return obj.Pkg().Path(), name
}
