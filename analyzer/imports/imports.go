// Package imports defines the imports rule: a lease package must not import
// an HTTP client or a model SDK, directly or transitively.
package imports

import (
	"cmp"
	"fmt"
	"go/ast"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Name is the rule's name: its analyzer name, flag prefix, diagnostic
// category and //leaseguard:allow name.
const Name = "imports"

const doc = `check that a lease package imports no HTTP client or model SDK

A lease package decides who may write. One that imports an HTTP client or a
model SDK hands that vendor a veto over leadership: its timeouts, refusals
and truncated responses decide whether a lease is renewed. The rule reports,
at an import in the lease package's own files:

  - a direct import of a model SDK, a third-party HTTP or RPC client, or a
    package banned by -imports.ban;
  - a direct import of net/http, golang.org/x/net/http2,
    google.golang.org/grpc or a websocket library (gorilla, coder,
    nhooyr.io, golang.org/x/net/websocket), or a package under them, where
    the lease package's own code uses that package's client API;
  - an import whose dependencies reach a model SDK or a third-party client
    library, with the shortest chain;
  - an import whose dependencies reach net/http, http2, grpc or a websocket
    library where a package on the chain uses the client API: an
    http.Client or http.Transport (a method, a literal, a field), http.Get,
    Head, Post, PostForm, DefaultClient, DefaultTransport, the http2
    Transport and ClientConn, an http2 Framer in a package that dials a
    connection (net.Dial, a tls.Dialer), grpc.Dial, DialContext, NewClient,
    a grpc.ClientConn, Invoke, NewStream, a websocket Dialer, Dial,
    DialConfig or NewClient.

Building a request (http.NewRequest) is not a call: testify and httptest
build requests for handlers in the same process. Types, handlers, gRPC
codes and status, websocket upgraders and HTTP/2 servers are not a client. -imports.strict reports every import of
those packages, direct or transitive, client use or not.

Test files (_test.go, and so the external test package) are not the lease
path and are not checked unless -imports.tests is set.

Packages matching -imports.allow are never reported, and cut any chain
through them. Transitive imports travel as package facts: every package
exports the banned packages it reaches with one shortest chain each, so the
rule sees the same under go vet (which reads facts of direct imports only)
as under the standalone driver.`

// Reach is the fact that a package reaches banned packages: for each ban
// entry, and for each kind of client whose API a package on the way uses,
// the shortest chain. Packages that reach nothing export no fact.
type Reach struct {
	Entries []Entry
}

// Entry is one banned package reached, and how.
type Entry struct {
	Target string   // the banned package reached
	Kind   string   // what it is: model SDK, HTTP client, ...
	Key    string   // the ban entry's prefix, or "use " and the kind for client use: one entry per key
	Chain  []string // packages from the fact's package to the target, target excluded
	Use    string   // for client use: what the last package on Chain uses, e.g. http.Client.Do
	OnUse  bool     // counts only with client use of its kind, or in strict mode
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
		URL:       "https://github.com/leaseguard/leaseguard/blob/main/docs/rules/imports.md",
		Requires:  []*analysis.Analyzer{leaseAnalyzer},
		FactTypes: []analysis.Fact{new(Reach)},
	}
	cfg.Flags(Name, &a.Flags)
	// Flags are parsed before the first run, so the settings are final then.
	settings := sync.OnceValue(func() *rule {
		return &rule{bans: newBanList(cfg.Imports.Ban), allow: config.NewMatcher(cfg.Imports.Allow),
			strict: cfg.Imports.Strict, tests: cfg.Imports.Tests}
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
	tests  bool
}

func (r *rule) run(pass *analysis.Pass, res *lease.Result) {
	keep := r.checked(pass)
	all, own := r.clientUses(pass, keep)
	// Every package, dependencies included, summarises what it reaches, so
	// that lease packages that import it can see through it.
	// A main package is imported by no one (the test main least of all).
	if pass.Pkg.Name() != "main" {
		if sum := r.summarize(pass, all); sum != nil {
			pass.ExportPackageFact(sum)
		}
	}
	if !res.Lease {
		return
	}
	var specs []*ast.ImportSpec
	direct := make(map[string]bool)
	for _, f := range pass.Files {
		if keep(f) {
			for _, spec := range f.Imports {
				specs = append(specs, spec)
				path, _ := strconv.Unquote(spec.Path.Value)
				direct[path] = true
			}
		}
	}
	rep := res.Reporter(pass, Name, r.scope())
	for _, spec := range specs {
		r.checkImport(pass, rep, spec, own, direct)
	}
	rep.Finish()
}

// scope is the files on the lease path: test files (and so the external
// test package) are not, unless -imports.tests.
func (r *rule) scope() lease.Scope {
	if r.tests {
		return lease.AllFiles
	}
	return lease.NoTests
}

// checked returns whether a file of pass's package is on the lease path.
func (r *rule) checked(pass *analysis.Pass) func(*ast.File) bool {
	scope := r.scope()
	return func(f *ast.File) bool { return scope.Covers(pass.Fset, f.Pos()) }
}

// checkImport reports spec if it is banned, given the lease package's own
// client uses and the paths its checked files import.
func (r *rule) checkImport(pass *analysis.Pass, rep *lease.Reporter, spec *ast.ImportSpec, own uses, direct map[string]bool) {
	path, err := strconv.Unquote(spec.Path.Value)
	if err != nil || r.allow.Match(path) {
		return
	}
	if b := r.bans.match(path); b != nil {
		u, used := own.of(path, b, r.bans, direct)
		switch {
		case b.onUse && used:
			rep.Report(analysis.Diagnostic{Pos: spec.Pos(), End: spec.End(),
				Message: fmt.Sprintf("lease package imports %s %s and uses %s: %s", b.kind, path, u.what, b.kind.why()),
				Related: []analysis.RelatedInformation{{Pos: u.pos, Message: "uses " + u.what}}})
		case !b.onUse || r.strict:
			rep.ReportRangef(spec, "lease package imports %s %s: %s", b.kind, path, b.kind.why())
		}
		// Otherwise net/http, http2, grpc or a websocket library for types,
		// handlers, codes or a server only.
		return
	}
	if pass.Pkg.Path() == path+"_test" {
		return // the package under test, checked in its own right with its test files
	}
	pkgName := pass.TypesInfo.PkgNameOf(spec)
	if pkgName == nil {
		return // import "C", or an import that did not type-check
	}
	var reach Reach
	if !pass.ImportPackageFact(pkgName.Imported(), &reach) {
		return
	}
	used := make(map[string]bool)
	for _, e := range reach.Entries {
		if e.Use != "" {
			used[e.Kind] = true
		}
	}
	for _, e := range reach.Entries {
		if e.OnUse && (!r.strict || used[e.Kind]) {
			continue // reported through its client-use entry, or not at all
		}
		via := strings.Join(e.Chain, " -> ")
		if e.Use != "" {
			via += fmt.Sprintf(" (%s uses %s)", e.Chain[len(e.Chain)-1], e.Use)
		}
		rep.ReportRangef(spec, "lease package imports %s %s via %s: %s", e.Kind, e.Target, via, kind(e.Kind).why())
	}
}

// summarize returns what pass's package reaches, given its client uses, or
// nil for nothing. A banned package summarises nothing: a chain ends at the
// first banned package on it. An allowed package summarises nothing: it
// cuts chains.
func (r *rule) summarize(pass *analysis.Pass, all uses) *Reach {
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
	for k, u := range all.byKind() {
		add(Entry{Target: u.target, Kind: string(k), Key: "use " + string(k), Chain: []string{self}, Use: u.what})
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
