package leasepkg_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

func TestIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, iso := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		t.Run("AppendOrderTx in a "+string(iso)+" transaction is refused", func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			m := d.manager("a", nil)
			l := d.acquire(m)
			tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if err := orders.AppendOrderTx(ctx, m, tx, l, order(1)); !errors.Is(err, leasepkg.ErrIsolation) {
				t.Fatalf("AppendOrderTx: %v, want ErrIsolation", err)
			}
		})
	}

	// The snapshot's lease row expired, the current one is valid: read from
	// the snapshot, the fence refused a valid holder's write.
	t.Run("a renewal after the snapshot is not a stale fence", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		var old string
		if err := d.pool.QueryRow(ctx, `UPDATE worker_leases SET expires_at = clock_timestamp() + interval '200 milliseconds' RETURNING expires_at::text`).Scan(&old); err != nil {
			t.Fatal(err)
		}
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil { // takes the snapshot
			t.Fatal(err)
		}
		if _, err := m.Renew(ctx, l); err != nil {
			t.Fatal(err)
		}
		d.poll("the snapshot's expiry to pass", `SELECT clock_timestamp() > $1::timestamptz`, old)
		err = orders.AppendOrderTx(ctx, m, tx, l, order(1))
		if errors.Is(err, leasepkg.ErrStaleFence) || !errors.Is(err, leasepkg.ErrIsolation) {
			t.Fatalf("AppendOrderTx of the valid holder: %v, want ErrIsolation", err)
		}
	})

	// A default of REPEATABLE READ: Migrate and CheckSchema refuse it,
	// since a transaction begun at the default cannot be fenced; the
	// package's own transactions ask for READ COMMITTED, so a fenced Tx
	// whose fence waits for a change of the lease row (an extension that
	// locked the row FOR UPDATE) re-reads the row and writes, where under
	// REPEATABLE READ the lock would fail with 40001.
	t.Run("a default of repeatable read", func(t *testing.T) {
		t.Parallel()
		migrated := newDB(t)
		migrated.exec(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'repeatable read'); END $$`)
		pool, err := pgxpool.NewWithConfig(ctx, migrated.pool.Config().Copy()) // new connections, new default
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		d := &db{t: t, pool: pool}
		m := d.manager("a", nil)
		for what, err := range map[string]error{"Migrate": m.Migrate(ctx), "CheckSchema": m.CheckSchema(ctx)} {
			if !errors.Is(err, leasepkg.ErrIsolation) {
				t.Fatalf("%s: %v, want ErrIsolation", what, err)
			}
		}
		l := d.acquire(m)

		renewal, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer renewal.Rollback(ctx)
		if _, err := renewal.Exec(ctx, `SELECT 1 FROM worker_leases FOR UPDATE`); err != nil {
			t.Fatal(err)
		}
		if _, err := renewal.Exec(ctx, `UPDATE worker_leases SET expires_at = clock_timestamp() + interval '1 minute'`); err != nil {
			t.Fatal(err)
		}
		// Tx asks for READ COMMITTED whatever the default: its fence
		// waits for the renewal, re-reads the row and writes.
		wrote := make(chan error, 1)
		go func() { wrote <- orders.AppendOrder(ctx, m, l, order(1)) }()
		d.waitForLockWait(fenceStatement)
		if err := renewal.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-wrote; err != nil {
			t.Fatalf("a fenced Tx across a renewal: %v", err)
		}
		// A transaction begun at the default is refused.
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := m.Fence(ctx, tx, l); !errors.Is(err, leasepkg.ErrIsolation) {
			t.Fatalf("Fence in a transaction begun at the default: %v, want ErrIsolation", err)
		}
	})
}
