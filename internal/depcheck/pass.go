package depcheck

// One package's analysis: parse, type-check against the imports' export
// data, run the analyzers, keep the facts.

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"net/url"
	"os"
	"reflect"
	"runtime/debug"
	"slices"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/types/objectpath"
)

// facts are the facts that a package's analysis exported, for the
// packages that import it: object facts by the object's path in the
// package (objectpath), so that an importer finds them on the objects its
// export data gives it.
type facts struct {
	pkg map[reflect.Type]analysis.Fact
	obj map[objectKey]analysis.Fact
}

type objectKey struct {
	path objectpath.Path
	t    reflect.Type
}

// A pass is the state of one package's analysis.
type pass struct {
	g    *graph
	n    *node
	fset *token.FileSet
	tpkg *types.Package
	// The package's other and ignored files, absolute, for every
	// analyzer's pass.
	other, ignored []string
	enc            objectpath.Encoder
	own            map[ownKey]analysis.Fact // object facts on the package's own objects
	ownPk          map[reflect.Type]analysis.Fact
}

type ownKey struct {
	obj types.Object
	t   reflect.Type
}

// analyse parses and type-checks n, runs the analyzers on it and keeps its
// facts, and its findings if it is a root.
func (g *graph) analyse(n *node) error {
	p := &pass{
		g: g, n: n, fset: g.fset,
		other:   n.abs(n.CFiles, n.CXXFiles, n.MFiles, n.HFiles, n.FFiles, n.SFiles, n.SwigFiles, n.SwigCXXFiles, n.SysoFiles),
		ignored: n.abs(n.IgnoredGoFiles, n.IgnoredOtherFiles),
		own:     make(map[ownKey]analysis.Fact), ownPk: make(map[reflect.Type]analysis.Fact),
	}
	files, info, err := p.check()
	if err != nil {
		return err
	}
	analyzers := g.facts
	if n.root != nil {
		analyzers = g.all
		n.root.Fset = p.fset
	}
	results := make(map[*analysis.Analyzer]any, len(analyzers))
	for _, a := range analyzers {
		res, err := p.run(a, files, info, results)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", a.Name, n.ImportPath, err)
		}
		results[a] = res
	}
	n.facts = p.export()
	if n.keep {
		n.tpkg = p.tpkg // read by its importers, which run after it
	}
	return nil
}

// check parses n's files and type-checks them.
func (p *pass) check() ([]*ast.File, *types.Info, error) {
	n := p.n
	var files []*ast.File
	var errs []error
	for _, name := range n.abs(n.CompiledGoFiles) {
		f, err := parser.ParseFile(p.fset, name, nil, parser.AllErrors|parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			errs = append(errs, err)
		}
		if f != nil {
			files = append(files, f)
		}
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("parsing %s: %w", n.ImportPath, errors.Join(errs...))
	}
	info := &types.Info{
		Types:        make(map[ast.Expr]types.TypeAndValue),
		Instances:    make(map[*ast.Ident]types.Instance),
		Defs:         make(map[*ast.Ident]types.Object),
		Uses:         make(map[*ast.Ident]types.Object),
		Implicits:    make(map[ast.Node]types.Object),
		Selections:   make(map[*ast.SelectorExpr]*types.Selection),
		Scopes:       make(map[ast.Node]*types.Scope),
		FileVersions: make(map[*ast.File]string),
	}
	conf := &types.Config{
		Importer: p,
		Sizes:    p.g.sizes,
		Error:    func(err error) { errs = append(errs, err) },
	}
	if m := n.Module; m != nil && m.GoVersion != "" {
		conf.GoVersion = "go" + m.GoVersion
	}
	p.tpkg = types.NewPackage(n.path(), n.Name)
	_ = types.NewChecker(conf, p.fset, p.tpkg, info).Files(files) // the errors went to conf.Error
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("type-checking %s: %w", n.ImportPath, errors.Join(errs...))
	}
	return files, info, nil
}

// Import implements types.Importer.
func (p *pass) Import(path string) (*types.Package, error) { return p.ImportFrom(path, "", 0) }

// ImportFrom implements types.ImporterFrom: the package that n's import
// path resolves to, as type-checked from source if it is a test variant,
// else from its export data.
func (p *pass) ImportFrom(path, _ string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	id := path
	if to, ok := p.n.ImportMap[path]; ok {
		id = to
	}
	m := p.g.byID[id]
	if m == nil {
		return nil, fmt.Errorf("%s is not among %s's imports", id, p.n.ImportPath)
	}
	if m.ForTest != "" {
		if m.tpkg == nil {
			return nil, fmt.Errorf("%s was not type-checked before %s", id, p.n.ImportPath)
		}
		return m.tpkg, nil
	}
	u := &p.g.types
	u.Lock()
	defer u.Unlock()
	if pkg := u.pkgs[m.path()]; pkg != nil && pkg.Complete() {
		return pkg, nil // read before
	}
	if m.Export == "" {
		return nil, fmt.Errorf("no export data for %s", id)
	}
	f, err := os.Open(m.Export)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Up to Go 1.27, go list -export names the compiler's archive, whose
	// export data NewReader finds; from Go 1.28 a file that Read reads
	// directly, which NewReader passes through.
	r, err := gcexportdata.NewReader(bufio.NewReader(f)) //nolint:staticcheck // see above
	if err != nil {
		return nil, fmt.Errorf("reading export data for %s: %w", id, err)
	}
	return gcexportdata.Read(r, p.fset, u.pkgs, m.path())
}

// run runs a on the package, results holding what a requires.
func (p *pass) run(a *analysis.Analyzer, files []*ast.File, info *types.Info, results map[*analysis.Analyzer]any) (res any, err error) {
	n := p.n
	pass := &analysis.Pass{
		Analyzer:     a,
		Fset:         p.fset,
		Files:        files,
		OtherFiles:   p.other,
		IgnoredFiles: p.ignored,
		Pkg:          p.tpkg,
		TypesInfo:    info,
		TypesSizes:   p.g.sizes,
		Module:       &analysis.Module{},
		ResultOf:     make(map[*analysis.Analyzer]any, len(a.Requires)),
		Report:       func(analysis.Diagnostic) {},

		ImportObjectFact:  p.objectFact,
		ExportObjectFact:  func(obj types.Object, fact analysis.Fact) { p.exportObjectFact(a, obj, fact) },
		ImportPackageFact: p.packageFact,
		ExportPackageFact: func(fact analysis.Fact) { p.ownPk[reflect.TypeOf(fact)] = fact },
		AllObjectFacts:    func() []analysis.ObjectFact { return p.allObjectFacts(a) },
		AllPackageFacts:   func() []analysis.PackageFact { return p.allPackageFacts(a) },
	}
	if m := n.Module; m != nil {
		pass.Module = &analysis.Module{Path: m.Path, Version: m.Version, GoVersion: m.GoVersion, Main: m.Main, Indirect: m.Indirect, Dir: m.Dir, GoMod: m.GoMod}
	}
	for _, req := range a.Requires {
		pass.ResultOf[req] = results[req]
	}
	pass.ReadFile = func(name string) ([]byte, error) {
		if !slices.Contains(pass.OtherFiles, name) && !slices.Contains(pass.IgnoredFiles, name) &&
			!slices.ContainsFunc(files, func(f *ast.File) bool { return p.fset.File(f.FileStart).Name() == name }) {
			return nil, fmt.Errorf("Pass.ReadFile: %s is not among OtherFiles, IgnoredFiles, or names of Files", name)
		}
		return os.ReadFile(name)
	}
	if root := n.root; root != nil {
		pass.Report = func(d analysis.Diagnostic) {
			root.Diagnostics = append(root.Diagnostics, Diagnostic{Analyzer: a, Diagnostic: d})
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	start := 0
	if n.root != nil {
		start = len(n.root.Diagnostics)
	}
	res, err = a.Run(pass)
	if err != nil {
		return nil, err
	}
	if got, want := reflect.TypeOf(res), a.ResultType; got != want {
		return nil, fmt.Errorf("returned a result of type %v, not its ResultType %v", got, want)
	}
	if n.root != nil {
		for i := start; i < len(n.root.Diagnostics); i++ {
			d := &n.root.Diagnostics[i].Diagnostic
			if d.URL, err = resolveURL(a, *d); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// resolveURL resolves d's URL, or its category as a fragment, against
// a's, as checker.Analyze does.
func resolveURL(a *analysis.Analyzer, d analysis.Diagnostic) (string, error) {
	if d.URL == "" && d.Category == "" && a.URL == "" {
		return "", nil
	}
	raw := d.URL
	if d.URL == "" && d.Category != "" {
		raw = "#" + d.Category
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("invalid Diagnostic.URL %q: %w", raw, err)
	}
	base, err := url.Parse(a.URL)
	if err != nil {
		return "", fmt.Errorf("invalid Analyzer.URL %q: %w", a.URL, err)
	}
	return base.ResolveReference(u).String(), nil
}

// objectFact implements Pass.ImportObjectFact.
func (p *pass) objectFact(obj types.Object, ptr analysis.Fact) bool {
	t := reflect.TypeOf(ptr)
	var fact analysis.Fact
	if obj.Pkg() == p.tpkg {
		fact = p.own[ownKey{obj, t}]
	} else if obj.Pkg() != nil {
		if m := p.g.lookup(p.n, obj.Pkg().Path()); m != nil && m.facts != nil && len(m.facts.obj) > 0 {
			if path, err := p.enc.For(obj); err == nil {
				fact = m.facts.obj[objectKey{path, t}]
			}
		}
	}
	if fact == nil {
		return false
	}
	reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(fact).Elem())
	return true
}

// exportObjectFact implements Pass.ExportObjectFact.
func (p *pass) exportObjectFact(a *analysis.Analyzer, obj types.Object, fact analysis.Fact) {
	if obj.Pkg() != p.tpkg {
		panic(fmt.Sprintf("%s: fact %T on %s, an object of another package than %s", a.Name, fact, obj, p.tpkg.Path()))
	}
	p.own[ownKey{obj, reflect.TypeOf(fact)}] = fact
}

// packageFact implements Pass.ImportPackageFact.
func (p *pass) packageFact(pkg *types.Package, ptr analysis.Fact) bool {
	t := reflect.TypeOf(ptr)
	var fact analysis.Fact
	if pkg == p.tpkg {
		fact = p.ownPk[t]
	} else if m := p.g.lookup(p.n, pkg.Path()); m != nil && m.facts != nil {
		fact = m.facts.pkg[t]
	}
	if fact == nil {
		return false
	}
	reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(fact).Elem())
	return true
}

// allObjectFacts implements Pass.AllObjectFacts: a's facts on this
// package's objects and on those of the packages that its types refer
// to, directly or not.
func (p *pass) allObjectFacts(a *analysis.Analyzer) []analysis.ObjectFact {
	var out []analysis.ObjectFact
	for k, f := range p.own {
		if isFactOf(a, k.t) {
			out = append(out, analysis.ObjectFact{Object: k.obj, Fact: f})
		}
	}
	for pkg, m := range p.imported() {
		for k, f := range m.facts.obj {
			if !isFactOf(a, k.t) {
				continue
			}
			if obj, err := objectpath.Object(pkg, k.path); err == nil {
				out = append(out, analysis.ObjectFact{Object: obj, Fact: f})
			}
		}
	}
	return out
}

// allPackageFacts implements Pass.AllPackageFacts, as allObjectFacts.
func (p *pass) allPackageFacts(a *analysis.Analyzer) []analysis.PackageFact {
	var out []analysis.PackageFact
	for t, f := range p.ownPk {
		if isFactOf(a, t) {
			out = append(out, analysis.PackageFact{Package: p.tpkg, Fact: f})
		}
	}
	for pkg, m := range p.imported() {
		for t, f := range m.facts.pkg {
			if isFactOf(a, t) {
				out = append(out, analysis.PackageFact{Package: pkg, Fact: f})
			}
		}
	}
	return out
}

// imported returns the packages that the package's types refer to,
// directly or not, with their nodes, for those that have facts.
func (p *pass) imported() map[*types.Package]*node {
	out := make(map[*types.Package]*node)
	var visit func(pkgs []*types.Package)
	visit = func(pkgs []*types.Package) {
		for _, pkg := range pkgs {
			if _, ok := out[pkg]; ok {
				continue
			}
			if m := p.g.lookup(p.n, pkg.Path()); m != nil && m.facts != nil {
				out[pkg] = m
			} else {
				out[pkg] = nil
			}
			visit(pkg.Imports())
		}
	}
	visit(p.tpkg.Imports())
	maps.DeleteFunc(out, func(_ *types.Package, m *node) bool { return m == nil })
	return out
}

func isFactOf(a *analysis.Analyzer, t reflect.Type) bool {
	return slices.ContainsFunc(a.FactTypes, func(f analysis.Fact) bool { return reflect.TypeOf(f) == t })
}

// export returns the package's facts for its importers: object facts on
// the objects that an importer can name (those that objectpath encodes).
func (p *pass) export() *facts {
	fs := &facts{pkg: p.ownPk, obj: make(map[objectKey]analysis.Fact)}
	for k, f := range p.own {
		if path, err := p.enc.For(k.obj); err == nil {
			fs.obj[objectKey{path, k.t}] = f
		}
	}
	return fs
}
