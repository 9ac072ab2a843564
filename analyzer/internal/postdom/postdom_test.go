package postdom

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

const controlSrc = `package p

func x() {}
func y() {}
func z() {}

func returns(a, b bool) {
	if a {
		return
	}
	x()
	if b {
		y()
		return
	}
	z()
}

func panics(a bool) {
	if a {
		panic("no")
	}
	x()
}

func continues(xs []int, a bool) {
	for range xs {
		if a {
			continue
		}
		x()
	}
}

func after(xs []int, a bool) {
	for range xs {
		x()
		if a {
			y()
		}
	}
}

func endless(a bool) {
	for {
		if a {
			continue
		}
		x()
	}
}

func endlessAfter(a bool) {
	for {
		x()
		if a {
			y()
		}
	}
}

func breaks(a bool) {
	for {
		x()
		if a {
			break
		}
	}
	y()
}
`

func TestControlled(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", controlSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{}, fset, types.NewPackage("p", "p"), []*ast.File{f}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fn, branch string // the function, and the parameter its branch tests
		decided    map[string]bool
	}{
		{"returns", "a", map[string]bool{"x": true, "y": true, "z": true}},
		{"returns", "b", map[string]bool{"x": false, "y": true, "z": true}},
		{"panics", "a", map[string]bool{"x": true}},
		{"continues", "a", map[string]bool{"x": true}},
		{"after", "a", map[string]bool{"x": false, "y": true}},
		{"endless", "a", map[string]bool{"x": true}},
		{"endlessAfter", "a", map[string]bool{"x": false, "y": true}},
		{"breaks", "a", map[string]bool{"x": true, "y": false}},
	} {
		t.Run(tc.fn+"/"+tc.branch, func(t *testing.T) {
			fn := pkg.Func(tc.fn)
			branch := branchOn(t, fn, tc.branch)
			decided := New(fn).Controlled(branch.Index)
			for callee, want := range tc.decided {
				if got := decided[blockCalling(t, fn, callee).Index]; got != want {
					t.Errorf("the branch on %s decides whether %s runs: %v, want %v", tc.branch, callee, got, want)
				}
			}
		})
	}
}

// branchOn returns the block of fn that ends in a branch on parameter p.
func branchOn(t *testing.T, fn *ssa.Function, p string) *ssa.BasicBlock {
	for _, b := range fn.Blocks {
		if iff, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok && iff.Cond.Name() == p {
			return b
		}
	}
	t.Fatalf("%s: no branch on %s", fn.Name(), p)
	return nil
}

// blockCalling returns the block of fn that calls the function name.
func blockCalling(t *testing.T, fn *ssa.Function, name string) *ssa.BasicBlock {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(*ssa.Call); ok {
				if callee := call.Call.StaticCallee(); callee != nil && callee.Name() == name {
					return b
				}
			}
		}
	}
	t.Fatalf("%s: no call of %s", fn.Name(), name)
	return nil
}
