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

// TestAccessorParts checks that a column named by an accessor (a method
// that takes nothing but its receiver) is one placeholder wherever the
// accessor is called, as a field is.
func TestAccessorParts(t *testing.T) {
	t.Parallel()
	_, got, oks := build(t, `package p

import "fmt"

func exec(string) {}

type lessor struct{ exp string }

func (l *lessor) expName() string {
	if l.exp == "" {
		return "exp"
	}
	return l.exp
}

type lease struct{ lessor *lessor }

func (l *lessor) sweep() { exec(fmt.Sprintf("DELETE FROM leases WHERE %s < now()", l.expName())) }

func (l *lease) renew() { exec(fmt.Sprintf("UPDATE leases SET %s = $1 WHERE %s > now()", l.lessor.expName(), l.lessor.expName())) }
`)
	if len(got) != 2 {
		t.Fatalf("%d calls of exec, want 2", len(got))
	}
	var idents []string
	for i, ts := range got {
		if !oks[i] || len(ts) != 1 {
			t.Fatalf("call %d: texts %v, ok %v; want one text", i, ts, oks[i])
		}
		for _, f := range strings.Fields(ts[0].SQL) {
			if IsPlaceholder(f) {
				idents = append(idents, f)
			}
		}
	}
	if len(idents) != 3 || idents[0] != idents[1] || idents[1] != idents[2] {
		t.Errorf("one accessor, placeholders %q; want one, three times", idents)
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

// TestReturned checks that a helper of the package that returns the SQL
// text, alone or with its arguments, is read at each call: what it
// returns, with its parameters bound to that call's arguments.
func TestReturned(t *testing.T) {
	t.Parallel()
	texts, got, oks := build(t, `package p

import "fmt"

func exec(string) {}

type client struct{ tableName string }

func New(table string) *client { return &client{tableName: table} }

const leaseTable = "leases"

func releaseSQL() string { return "DELETE FROM " + leaseTable + " WHERE name = $1" }

func queryWithExpiry(format string, ttl int) (string, []any) {
	return fmt.Sprintf(format, "now() + $1 * interval '1 second'"), []any{ttl}
}

func (c *client) renewSQL(table string) string {
	return "UPDATE " + table + " SET expires_at = now()"
}

func pick(bump bool) string {
	if bump {
		return "UPDATE leases SET epoch = epoch + 1"
	}
	return releaseSQL()
}

func loop(n int) string {
	if n == 0 {
		return "SELECT 1"
	}
	return loop(n - 1)
}

func same(q string) string { return q }

func deleteSQL(table, key string) string {
	return "DELETE FROM " + table + " WHERE " + key + " = $1"
}

func (c *client) calls(bump bool) {
	exec(releaseSQL())
	q, args := queryWithExpiry("UPDATE leases SET expires_at = %s", 15)
	exec(q)
	_ = args
	q2, _ := queryWithExpiry("INSERT INTO leases (name, expires_at) VALUES ('a', %s)", 15)
	exec(q2)
	exec(c.renewSQL(c.tableName))
	exec(pick(bump))
	exec(loop(3))
	exec(deleteSQL(same("locks"), "id"))
	exec(deleteSQL("leases", "name"))
}

func Run(q string) { exec(same(q)) }
`)
	want := [][]string{
		{"DELETE FROM leases WHERE name = $1"},
		{"UPDATE leases SET expires_at = now() + $1 * interval '1 second'"},
		{"INSERT INTO leases (name, expires_at) VALUES ('a', now() + $1 * interval '1 second')"},
		{"UPDATE leaseguard_unknown_1 SET expires_at = now()"},
		{"UPDATE leases SET epoch = epoch + 1", "DELETE FROM leases WHERE name = $1"},
		nil, // a helper that calls itself: not recovered
		{"DELETE FROM locks WHERE id = $1"},
		{"DELETE FROM leases WHERE name = $1"},
		nil, // an exported function's parameter, passed through a helper: not recovered
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls of exec, want %d", len(got), len(want))
	}
	for i := range want {
		var sqls []string
		for _, tx := range got[i] {
			sqls = append(sqls, tx.SQL)
		}
		slices.Sort(sqls)
		slices.Sort(want[i])
		if oks[i] != (want[i] != nil) || !slices.Equal(sqls, want[i]) {
			t.Errorf("call %d: texts %q (ok %v), want %q", i, sqls, oks[i], want[i])
		}
	}
	if expr, ok := texts.Expr("leaseguard_unknown_1"); !ok || expr != "c.tableName" {
		t.Errorf("the renewal's table stands for %q, %v; want c.tableName, the caller's argument", expr, ok)
	}
}
