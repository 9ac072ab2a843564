package sqltext

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

// build returns the SSA package of src and the texts of the argument of
// every call of exec in it, in order.
func build(t *testing.T, src string) (*Texts, [][]Text, []bool) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg := types.NewPackage("example.com/p", "p")
	ssaPkg, info, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default()}, fset, pkg, []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	var funcs []*ssa.Function
	for _, m := range ssaPkg.Members {
		switch m := m.(type) {
		case *ssa.Function:
			funcs = append(funcs, m)
		case *ssa.Type:
			ms := ssaPkg.Prog.MethodSets.MethodSet(types.NewPointer(m.Type()))
			for i := range ms.Len() {
				funcs = append(funcs, ssaPkg.Prog.MethodValue(ms.At(i)))
			}
		}
	}
	slices.SortFunc(funcs, func(a, b *ssa.Function) int { return cmp.Compare(a.Pos(), b.Pos()) })
	texts := New(ssaPkg, []*ast.File{f}, funcs, fset, info)
	var got [][]Text
	var oks []bool
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(*ssa.Call)
				if !ok || call.Call.StaticCallee() == nil || call.Call.StaticCallee().Name() != "exec" {
					continue
				}
				ts, ok := texts.Of(call.Call.Args[0])
				got, oks = append(got, ts), append(oks, ok)
			}
		}
	}
	return texts, got, oks
}

func TestRunTimeParts(t *testing.T) {
	t.Parallel()
	texts, got, oks := build(t, `package p

import "fmt"

func exec(string) {}

type client struct{ tableName string }

func New(table string) *client { return &client{tableName: table} }

func (c *client) renew() { exec("UPDATE " + c.tableName + " SET expires_at = now()") }

func (c *client) release() { exec(fmt.Sprintf("DELETE FROM %s WHERE name = $1", c.tableName)) }
`)
	if len(got) != 2 {
		t.Fatalf("%d calls of exec, want 2", len(got))
	}
	var idents []string
	for i, ts := range got {
		if !oks[i] || len(ts) != 1 || ts[0].Exact {
			t.Fatalf("call %d: texts %v, ok %v; want one inexact text", i, ts, oks[i])
		}
		f := strings.Fields(ts[0].SQL)
		ident := f[1]
		if f[0] == "DELETE" {
			ident = f[2]
		}
		expr, ok := texts.Expr(ident)
		if !ok || expr != "c.tableName" {
			t.Errorf("call %d: %q stands for %q, %v; want c.tableName", i, ident, expr, ok)
		}
		idents = append(idents, ident)
	}
	if idents[0] != idents[1] {
		t.Errorf("one field, two placeholders: %q and %q", idents[0], idents[1])
	}
}

// TestBounds checks that texts too large to check are not built: without
// the bound, doubling a string 24 times builds 150 MB, and a formatting
// width of a million prints a million bytes. A part past the bound stands
// in as a placeholder, or the text is not recovered.
func TestBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("package p\n\nimport \"fmt\"\n\nfunc exec(string) {}\n\nfunc doubled() {\n\ts := \"SELECT 1 \"\n")
	for range 24 {
		b.WriteString("\ts = s + s\n")
	}
	b.WriteString("\texec(s)\n}\n\nfunc wide() { exec(fmt.Sprintf(\"SELECT %01000000d\", 1)) }\n")
	_, got, _ := build(t, b.String())
	if len(got) != 2 {
		t.Fatalf("%d calls of exec, want 2", len(got))
	}
	for i := range got {
		for _, tx := range got[i] {
			if tx.Exact || len(tx.SQL) > pgsql.MaxLen {
				t.Errorf("call %d: recovered an exact text of %d bytes (%.40q); want none over %d bytes", i, len(tx.SQL), tx.SQL, pgsql.MaxLen)
			}
		}
	}
}

// TestManyCallers checks that a helper's parameter holds every caller's
// text, however many callers it has.
func TestManyCallers(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("package p\n\nfunc exec(string) {}\n\nfunc run(q string) { exec(q) }\n\nfunc calls() {\n")
	for i := range 40 {
		fmt.Fprintf(&b, "\trun(\"SELECT %d\")\n", i)
	}
	b.WriteString("}\n")
	_, got, oks := build(t, b.String())
	if len(got) != 1 || !oks[0] || len(got[0]) != 40 {
		t.Fatalf("got %d texts (ok %v), want 40", len(got[0]), oks)
	}
	for _, tx := range got[0] {
		if tx.At == nil {
			t.Errorf("text %q has no caller's argument to report at", tx.SQL)
		}
	}
}
