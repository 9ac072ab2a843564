// Package lazyssa builds a package's SSA form only when a rule asks for
// it, and only as much of it as the rule needs. Under go vet every
// dependency of every package is analysed for facts, the standard library
// included, and building SSA for all of them costs more than type checking
// them; most have nothing that a rule could learn from. The rules decide
// from syntax and types whether a package can matter, and which of its
// functions, and ask for SSA only then.
package lazyssa

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/noreturn"
)

// SSA builds the package's SSA form on demand.
type SSA struct {
	pass       *analysis.Pass
	all        func() *buildssa.SSA
	production func() *buildssa.SSA
}

// Get returns the package's SSA form, every function built, building it
// on the first call. The rules of one package share it.
func (s *SSA) Get() *buildssa.SSA { return s.all() }

// Production returns the package's SSA form with bodies only for the
// functions declared outside its _test.go files, as Only builds it with
// the package-level variables, building it on the first call; for a
// package without test files, Get's. The rules that check no test files
// share it: a test variant's test functions are most of its code.
func (s *SSA) Production() *buildssa.SSA { return s.production() }

// Only builds the package's SSA form with bodies for the function
// declarations that keep selects, and none for the others, as if they were
// declared without one (like functions written in assembly): calls of them
// are built, what they do is not. The package initialiser sets the initial
// values of package-level variables only with vars; without, it runs only
// the package's init functions. SrcFuncs holds the functions built with a
// body and their function literals. Every call builds anew.
func (s *SSA) Only(keep func(*ast.FuncDecl) bool, vars bool) *buildssa.SSA {
	files := make([]*ast.File, len(s.pass.Files))
	for i, f := range s.pass.Files {
		g := *f
		g.Decls = make([]ast.Decl, len(f.Decls))
		for j, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !keep(fd) {
				bodiless := *fd
				bodiless.Body = nil
				d = &bodiless
			}
			g.Decls[j] = d
		}
		files[i] = &g
	}
	info := s.pass.TypesInfo
	if !vars {
		// SSA builds the initial values from the initialisation order
		// that type checking recorded.
		noVars := *info
		noVars.InitOrder = nil
		info = &noVars
	}
	return build(s.pass, files, info)
}

// Funcs returns the functions of info that a rule analyses: the source
// functions and the package initialiser, which holds the initial values of
// package-level variables.
func Funcs(info *buildssa.SSA) []*ssa.Function {
	return slices.Concat(info.SrcFuncs, []*ssa.Function{info.Pkg.Func("init")})
}

// Analyzer returns a *SSA for the package. It requires noreturn, whose
// facts tell SSA which calls never return.
var Analyzer = &analysis.Analyzer{
	Name: "lazyssa",
	Doc: `build SSA-form IR when a rule asks for it

The result builds what buildssa builds, on demand, once per package, or
only the functions a rule asks for.`,
	URL:        "https://github.com/leaseguard/leaseguard/blob/main/docs/performance.md#the-analyzer",
	Requires:   []*analysis.Analyzer{noreturn.Analyzer},
	ResultType: reflect.TypeFor[*SSA](),
	Run: func(pass *analysis.Pass) (any, error) {
		// The pass, its syntax, types and noreturn result stay valid
		// while the analyzers that require this one run on the package.
		s := &SSA{pass: pass}
		s.all = sync.OnceValue(func() *buildssa.SSA { return build(pass, pass.Files, pass.TypesInfo) })
		s.production = sync.OnceValue(func() *buildssa.SSA {
			tests := make(map[*token.File]bool)
			for _, f := range pass.Files {
				if tf := pass.Fset.File(f.FileStart); strings.HasSuffix(tf.Name(), "_test.go") {
					tests[tf] = true
				}
			}
			if len(tests) == 0 {
				return s.all()
			}
			return s.Only(func(d *ast.FuncDecl) bool { return !tests[pass.Fset.File(d.Pos())] }, true)
		})
		return s, nil
	},
}

// build builds files, the package's syntax or a copy of it, with info, the
// package's type information or a copy of it, as buildssa
// does (golang.org/x/tools/go/analysis/passes/buildssa): a program of its
// own with the direct imports created from their types, and the source
// functions, function literals included, in source order.
func build(pass *analysis.Pass, files []*ast.File, info *types.Info) *buildssa.SSA {
	prog := ssa.NewProgram(pass.Fset, 0)
	prog.SetNoReturn(pass.ResultOf[noreturn.Analyzer].(noreturn.Result))
	for _, p := range pass.Pkg.Imports() {
		prog.CreatePackage(p, nil, nil, true)
	}
	pkg := prog.CreatePackage(pass.Pkg, files, info, false)
	pkg.Build()

	var funcs []*ssa.Function
	var add func(*ssa.Function)
	add = func(fn *ssa.Function) {
		funcs = append(funcs, fn)
		for _, anon := range fn.AnonFuncs {
			add(anon)
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Body != nil {
				add(prog.FuncValue(pass.TypesInfo.Defs[d.Name].(*types.Func)))
			}
		}
	}
	return &buildssa.SSA{Pkg: pkg, SrcFuncs: funcs}
}
