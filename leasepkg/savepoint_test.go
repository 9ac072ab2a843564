package leasepkg_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestFenceInSavepoint: a fence taken inside a savepoint loses its row lock
// when the caller rolls back to the savepoint, and the transaction's later
// writes would commit after another holder took over. The fence refuses
// to be taken there; at the top level, before or after a savepoint, it holds.
func TestFenceInSavepoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		inner func(t *testing.T, tx pgx.Tx) pgx.Tx // where the fence is taken
	}{
		{"pgx nested transaction", func(t *testing.T, tx pgx.Tx) pgx.Tx {
			sp, err := tx.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return sp
		}},
		{"SAVEPOINT statement", func(t *testing.T, tx pgx.Tx) pgx.Tx {
			if _, err := tx.Exec(ctx, `SAVEPOINT s`); err != nil {
				t.Fatal(err)
			}
			return tx
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			a, b := d.manager("a", nil), d.manager("b", nil)
			la := d.acquire(a)
			tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			err = a.Fence(ctx, tc.inner(t, tx), la)
			if err == nil {
				// What the fence let through: roll back to the savepoint,
				// another holder takes over without waiting, and the outer
				// transaction's write commits after it.
				if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT `+savepointName(tc.name)); err != nil {
					t.Fatal(err)
				}
				d.expire()
				lb := d.acquire(b)
				if _, err := tx.Exec(ctx, `INSERT INTO orders (lease_name, epoch, holder, order_key, payload) VALUES ($1, $2, $3, 'k', 'p')`,
					la.Name, la.Epoch, la.Holder); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				t.Fatalf("Fence inside a savepoint returned nil; rolled back to it, the transaction committed %d order(s) of epoch %d after epoch %d was acquired",
					d.staleOrders(), la.Epoch, lb.Epoch)
			}
			if !errors.Is(err, leasepkg.ErrSavepoint) {
				t.Fatalf("Fence inside a savepoint: %v, want ErrSavepoint", err)
			}
		})
	}

	t.Run("at the top level after a savepoint rolled back and released", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a := d.manager("a", nil)
		la := d.acquire(a)
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		// ROLLBACK TO leaves the savepoint in place (so does a pgx nested
		// transaction's Rollback): a fence after it would still be inside
		// it. RELEASE ends it.
		for _, stmt := range []string{`SAVEPOINT s`, `CREATE TEMP TABLE scratch (x int)`, `ROLLBACK TO SAVEPOINT s`, `RELEASE SAVEPOINT s`} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Fence(ctx, tx, la); err != nil {
			t.Fatalf("Fence at the top level: %v", err)
		}
		if err := orders.AppendOrderTx(ctx, a, tx, la, order(1)); err != nil {
			t.Fatalf("AppendOrderTx at the top level: %v", err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("AppendOrderTx inside a savepoint", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a := d.manager("a", nil)
		la := d.acquire(a)
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		sp, err := tx.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := orders.AppendOrderTx(ctx, a, sp, la, order(1)); !errors.Is(err, leasepkg.ErrSavepoint) {
			t.Fatalf("AppendOrderTx inside a savepoint: %v, want ErrSavepoint", err)
		}
	})
}

func savepointName(test string) string {
	if test == "pgx nested transaction" {
		return "sp_1"
	}
	return "s"
}
