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

	"github.com/jackc/pgx/v5"

	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestFenceRuleVerdicts runs the fence rule's fixture testdata/src/fence/proof
// against PostgreSQL, so that the rule's verdicts are checked by the
// database rather than by agreement with themselves: the fence the rule
// accepts rejects a stale epoch and makes a takeover wait; the one it
// reports for its missing row lock lets a stale write land. The fixture's
// statements take leasepkg's parameters and run as the holder's write, in
// place of leasepkg's own.
func TestFenceRuleVerdicts(t *testing.T) {
	t.Parallel()
	accepted := fixtureSQL(t, "acceptedSQL")
	unlocked := fixtureSQL(t, "unlockedSQL")

	t.Run("the accepted fence rejects a stale epoch", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := newDB(t)
		la := d.acquire(d.manager("a", nil))
		d.expire()
		if _, err := d.manager("b", nil).Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		tx, err := d.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := fixtureWrite(accepted)(ctx, tx, nil, la); !errors.Is(err, errRefused) {
			t.Fatalf("write under the taken-over epoch: %v, want it refused", err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written", n)
		}
	})
	t.Run("the accepted fence makes the takeover wait", func(t *testing.T) {
		t.Parallel()
		if got := raceTakeover(t, nil, fixtureWrite(accepted), true); got != 0 {
			t.Fatalf("%d orders committed after the takeover of their epoch, want 0", got)
		}
	})
	t.Run("the fence reported for its missing lock lets a stale write land", func(t *testing.T) {
		t.Parallel()
		if got := raceTakeover(t, nil, fixtureWrite(unlocked), false); got != 1 {
			t.Fatalf("%d orders committed after the takeover of their epoch, want 1", got)
		}
	})
}

// errRefused is a fixture statement's write that its fence refused.
var errRefused = errors.New("the fence refused the write")

// fixtureWrite returns the fenced write that runs sql, a fixture's fenced
// INSERT into orders with leasepkg's parameters ($1 lease name, $2 holder,
// $3 epoch, $4 order key, $5 payload), for order(1) under l.
func fixtureWrite(sql string) fencedWrite {
	return func(ctx context.Context, tx pgx.Tx, _ *leasepkg.Manager, l leasepkg.Lease) error {
		o := order(1)
		tag, err := tx.Exec(ctx, sql, l.Name, l.Holder, l.Epoch, o.Key, o.Payload)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errRefused
		}
		return nil
	}
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
