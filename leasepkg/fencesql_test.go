package leasepkg_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestFenceSQL: FenceSQL and TxSQL, the fence on database/sql (pgx's
// stdlib driver), admit the holder's writes, refuse what Fence refuses
// (a stale lease, a savepoint, REPEATABLE READ), and keep a takeover
// waiting until the fenced transaction has ended.
func TestFenceSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const insert = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload) VALUES ($1, $2, $3, $4, 'item')`
	write := func(l leasepkg.Lease, key string) func(ctx context.Context, tx *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, insert, l.Name, l.Epoch, l.Holder, key)
			return err
		}
	}
	sqlDB := func(d *db) *sql.DB {
		sdb := stdlib.OpenDBFromPool(d.pool)
		t.Cleanup(func() { sdb.Close() })
		return sdb
	}

	t.Run("the holder's write lands", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		if err := m.TxSQL(ctx, sqlDB(d), l, write(l, "k1")); err != nil {
			t.Fatal(err)
		}
		if n := d.count(`SELECT count(*) FROM orders WHERE epoch = $1 AND holder = 'a'`, l.Epoch); n != 1 {
			t.Fatalf("%d orders under %v, want 1", n, l)
		}
	})

	t.Run("a stale lease is refused with nothing written", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a, b := d.manager("a", nil), d.manager("b", nil)
		la := d.acquire(a)
		d.expire()
		d.acquire(b)
		err := a.TxSQL(ctx, sqlDB(d), la, write(la, "k1"))
		if !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Fatalf("TxSQL under a taken-over lease: %v, want ErrStaleFence", err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written", n)
		}
	})

	t.Run("inside a savepoint it is refused", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		tx, err := sqlDB(d).BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `SAVEPOINT s`); err != nil {
			t.Fatal(err)
		}
		if err := m.FenceSQL(ctx, tx, l); !errors.Is(err, leasepkg.ErrSavepoint) {
			t.Fatalf("FenceSQL inside a savepoint: %v, want ErrSavepoint", err)
		}
	})

	t.Run("in a repeatable read transaction it is refused", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		tx, err := sqlDB(d).BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := m.FenceSQL(ctx, tx, l); !errors.Is(err, leasepkg.ErrIsolation) {
			t.Fatalf("FenceSQL in a repeatable read transaction: %v, want ErrIsolation", err)
		}
	})

	t.Run("a takeover waits for the fenced transaction", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a := d.manager("a", nil)
		b := d.manager("b", func(c *leasepkg.Config) { c.LockTimeout = 30 * time.Second })
		la := d.acquire(a)
		tx, err := sqlDB(d).BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := a.FenceSQL(ctx, tx, la); err != nil {
			t.Fatal(err)
		}
		// The lease expires while the transaction is open; the takeover
		// must wait for its row lock, so the write commits before it.
		d.expire()
		took := make(chan error, 1)
		go func() {
			_, err := b.Acquire(ctx)
			took <- err
		}()
		d.waitForLockWait("UPDATE worker_leases")
		if err := write(la, "k1")(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-took; err != nil {
			t.Fatalf("takeover after the fenced transaction: %v", err)
		}
		if n := d.staleOrders(); n != 0 {
			t.Fatalf("%d orders committed after the takeover of their epoch", n)
		}
		if n := d.orders(); n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
	})
}
