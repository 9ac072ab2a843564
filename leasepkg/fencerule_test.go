package leasepkg_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestFenceRuleVerdicts runs the fence rule's fixture testdata/src/fence/proof
// against PostgreSQL, so that the rule's verdicts are checked by the
// database rather than by agreement with themselves: the fence the rule
// accepts rejects a stale epoch and makes a takeover wait; the one it
// reports for its missing row lock lets a stale write land.
func TestFenceRuleVerdicts(t *testing.T) {
	t.Parallel()
	accepted := fixtureSQL(t, "acceptedSQL")
	unlocked := fixtureSQL(t, "unlockedSQL")
	with := func(sql string) func(*leasepkg.Manager) {
		return func(m *leasepkg.Manager) { leasepkg.WithAppendSQL(m, sql) }
	}

	t.Run("the accepted fence rejects a stale epoch", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := newDB(t)
		a := d.manager("a", nil)
		with(accepted)(a)
		la := d.acquire(a)
		d.expire()
		if _, err := d.manager("b", nil).Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.AppendOrder(ctx, la, order(1)); !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Fatalf("write under the taken-over epoch: %v, want ErrStaleFence", err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written", n)
		}
	})
	t.Run("the accepted fence makes the takeover wait", func(t *testing.T) {
		t.Parallel()
		if got := raceTakeover(t, nil, with(accepted), true); got != 0 {
			t.Fatalf("%d orders committed after the takeover of their epoch, want 0", got)
		}
	})
	t.Run("the fence reported for its missing lock lets a stale write land", func(t *testing.T) {
		t.Parallel()
		if got := raceTakeover(t, nil, with(unlocked), false); got != 1 {
			t.Fatalf("%d orders committed after the takeover of their epoch, want 1", got)
		}
	})
}

// fixtureSQL returns the value of the string constant name, a single
// literal, in the fence rule's proof fixture.
func fixtureSQL(t *testing.T, name string) string {
	t.Helper()
	file := filepath.Join(testdir.Root(), "src", "fence", "proof", "proof.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != name || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s in %s is not a single literal", name, file)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		}
	}
	t.Fatalf("no constant %s in %s", name, file)
	return ""
}
