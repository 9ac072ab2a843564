// Package noreturn finds the functions that never return (they exit, panic
// or loop forever), so that SSA built for a lease package knows that the
// code after log.Fatal or os.Exit does not run.
//
// It computes what golang.org/x/tools/go/analysis/passes/ctrlflow computes
// for buildssa, at a fraction of the cost: ctrlflow builds and keeps a
// control-flow graph of every function of every package, which under go
// vet (every dependency analysed) doubles the peak memory of the largest
// packages. Here a function gets a control-flow graph only when its body
// holds something that can stop it (a call statement to a function that
// never returns, panic, a for loop without condition, an empty select, a
// goto);
// every other function returns.
package noreturn

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/leaseguard/leaseguard/analyzer/internal/typesx"
)

// Fact marks a function that never returns.
type Fact struct{}

// AFact marks Fact as a fact.
func (*Fact) AFact() {}

func (*Fact) String() string { return "noReturn" }

// Result reports whether a function never returns: one of the package's
// own, or another package's by its fact.
type Result func(*types.Func) bool

// Analyzer exports a Fact for each function of the package that never
// returns; its result is the predicate that ssa.Program.SetNoReturn takes.
var Analyzer = &analysis.Analyzer{
	Name: "noreturn",
	Doc: `find functions that never return

A function never returns when no path through its body reaches its end or a
return statement, as its control-flow graph (go/cfg) tells, calls to other
functions that never return included.`,
	URL:        "https://github.com/leaseguard/leaseguard/blob/main/docs/performance.md#the-analyzer",
	FactTypes:  []analysis.Fact{new(Fact)},
	ResultType: reflect.TypeFor[Result](),
	Run:        run,
}

type state uint8

const (
	unknown state = iota
	started
	returns
	stops
)

type finder struct {
	pass  *analysis.Pass
	decls map[*types.Func]*ast.FuncDecl
	state map[*types.Func]state
}

func run(pass *analysis.Pass) (any, error) {
	f := &finder{
		pass:  pass,
		decls: make(map[*types.Func]*ast.FuncDecl),
		state: make(map[*types.Func]state),
	}
	var fns []*types.Func
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Body != nil {
				if fn, ok := pass.TypesInfo.Defs[d.Name].(*types.Func); ok {
					f.decls[fn] = d
					fns = append(fns, fn)
				}
			}
		}
	}
	for _, fn := range fns {
		if f.noReturn(fn) {
			pass.ExportObjectFact(fn, new(Fact))
		}
	}
	return Result(func(fn *types.Func) bool {
		fn = fn.Origin()
		if fn.Pkg() == pass.Pkg {
			return f.state[fn] == stops
		}
		return f.callee(fn)
	}), nil
}

// noReturn decides whether fn, declared in this package, never returns.
// A call cycle is broken by taking the function met again to return, as
// ctrlflow does.
func (f *finder) noReturn(fn *types.Func) bool {
	switch f.state[fn] {
	case started, returns:
		return false
	case stops:
		return true
	}
	f.state[fn] = started
	body := f.decls[fn].Body
	s := returns
	if stop, known := intrinsic(fn); known {
		if stop {
			s = stops
		}
	} else if f.mayStop(body) && cfg.New(body, f.mayReturn).NoReturn() {
		s = stops
	}
	f.state[fn] = s
	return s == stops
}

// callee reports whether a function called from this package never
// returns.
func (f *finder) callee(fn *types.Func) bool {
	fn = fn.Origin()
	if _, ok := f.decls[fn]; ok {
		return f.noReturn(fn)
	}
	if stop, known := intrinsic(fn); known {
		return stop
	}
	return fn.Pkg() != f.pass.Pkg && f.pass.ImportObjectFact(fn, new(Fact))
}

// mayReturn is the predicate cfg.New asks about each call statement.
func (f *finder) mayReturn(call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && f.pass.TypesInfo.Uses[id] == panicBuiltin {
		return false
	}
	fn := typeutil.StaticCallee(f.pass.TypesInfo, call)
	return fn == nil || !f.callee(fn)
}

var panicBuiltin = types.Universe.Lookup("panic")

// mayStop reports whether body, outside the function literals in it, holds
// a statement after which control may not go on: a call statement to panic
// or to a function that never returns, a for loop without a condition, an
// empty select, or a goto. A body without one returns; most bodies are decided
// here without a control-flow graph.
func (f *finder) mayStop(body *ast.BlockStmt) bool {
	stop := false
	ast.Inspect(body, func(n ast.Node) bool {
		if stop {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ExprStmt:
			if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok && !f.mayReturn(call) {
				stop = true
			}
		case *ast.ForStmt:
			stop = n.Cond == nil
		case *ast.SelectStmt:
			stop = len(n.Body.List) == 0
		case *ast.BranchStmt:
			stop = n.Tok == token.GOTO
		}
		return !stop
	})
	return stop
}

// intrinsic reports what is known of fn without its body: functions that
// stop the calling goroutine, and a few whose bodies cannot tell, the list
// that ctrlflow keeps (golang.org/x/tools/go/analysis/passes/ctrlflow,
// knownIntrinsic).
func intrinsic(fn *types.Func) (stop, known bool) {
	switch {
	case isFunc(fn, "syscall", "Exit", "ExitProcess", "ExitThread"),
		isFunc(fn, "runtime", "Goexit", "fatalthrow", "fatalpanic", "exit"),
		isMethod(fn, "go.uber.org/zap", "Logger", "Fatal", "Panic"),
		isMethod(fn, "go.uber.org/zap", "SugaredLogger", "Fatal", "Fatalw", "Fatalf", "Panic", "Panicw", "Panicf"),
		isMethod(fn, "github.com/sirupsen/logrus", "Logger", "Exit", "Panic", "Panicf", "Panicln"),
		isMethod(fn, "github.com/sirupsen/logrus", "Entry", "Panicf", "Panicln"),
		isFunc(fn, "k8s.io/klog", "Exit", "ExitDepth", "Exitf", "Exitln", "Fatal", "FatalDepth", "Fatalf", "Fatalln"),
		isFunc(fn, "k8s.io/klog/v2", "Exit", "ExitDepth", "Exitf", "Exitln", "Fatal", "FatalDepth", "Fatalf", "Fatalln"):
		return true, true
	case isFunc(fn, "internal/abi", "EscapeNonString"),
		isFunc(fn, "hash/maphash", "Comparable"):
		return false, true
	}
	return false, false
}

// isFunc reports whether fn is a package-level function of pkg named one
// of names.
func isFunc(fn *types.Func, pkg string, names ...string) bool {
	return fn.Signature().Recv() == nil && inPkg(fn, pkg) && slices.Contains(names, fn.Name())
}

// isMethod reports whether fn is a method of pkg.typ named one of names.
func isMethod(fn *types.Func, pkg, typ string, names ...string) bool {
	recv := typesx.RecvNamed(fn)
	return recv != nil && recv.Obj().Name() == typ && inPkg(fn, pkg) && slices.Contains(names, fn.Name())
}

func inPkg(fn *types.Func, path string) bool {
	return fn.Pkg() != nil && fn.Pkg().Path() == path
}
