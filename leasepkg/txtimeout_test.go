package leasepkg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestTransactionTimeout: PostgreSQL 17 added transaction_timeout, which an
// operator may set for a server, a role or a database, and which the server
// arms when each transaction starts. Setting it inside a transaction that
// has it armed already changes nothing for that transaction, so the
// fence's own transaction_timeout (Config.IdleInTxTimeout, beside the idle
// timeout) must re-arm it to hold under a longer one, and must not lengthen
// a shorter one. A shorter one also ends the package's own transactions
// that wait for the lease row's lock, the takeover and the per-renewal
// bump, with 25P04 and the session, where lock_timeout would have ended
// only the statement: that must read as the wait it was.
//
// Here the database carries the setting (ALTER DATABASE ... SET), so every
// new session of the test's database has it; pools that must not have it
// set transaction_timeout = 0 for their own sessions.
func TestTransactionTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if v := newDB(t).count(`SELECT current_setting('server_version_num')::int`); v < 170000 {
		t.Skipf("PostgreSQL %d has no transaction_timeout (17 and later; LEASE_PG_VERSION=18 runs this)", v)
	}

	// setup makes a fresh database whose sessions get transaction_timeout
	// = setting, and returns it with a pool on it whose sessions have no
	// transaction_timeout.
	setup := func(t *testing.T, setting string) (*db, *pgxpool.Pool) {
		d := newDB(t)
		var name string
		if err := d.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		d.exec(`ALTER DATABASE ` + pgx.Identifier{name}.Sanitize() + ` SET transaction_timeout = '` + setting + `'`)
		d.pool = newPool(t, d.pool.Config(), "")
		return d, newPool(t, d.pool.Config(), "0")
	}

	// fencedSleep writes an order in a transaction on pool fenced by l,
	// then keeps it busy (not idle) for two seconds, and returns what
	// ended it (a bound counted from the transaction's start may end it
	// before the write).
	fencedSleep := func(t *testing.T, m *leasepkg.Manager, pool *pgxpool.Pool, l leasepkg.Lease) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := orders.AppendOrderTx(ctx, m, tx, l, order(1)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_sleep(2)`); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}

	for _, tc := range []struct {
		name, setting string
		idle          time.Duration // the fence's bound
	}{
		{"none: the fence's bound ends a busy fenced transaction", "0", 300 * time.Millisecond},
		{"longer than the fence's: the fence's bound still ends it", "10min", 300 * time.Millisecond},
		{"shorter than the fence's: it ends the fenced transaction first", "500ms", 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := setup(t, tc.setting)
			m := d.manager("a", func(c *leasepkg.Config) { c.IdleInTxTimeout = tc.idle })
			l := d.acquire(m)
			err := fencedSleep(t, m, d.pool, l)
			if !isCode(err, "25P04") {
				t.Fatalf("a fenced transaction busy for 2 s, transaction_timeout %s, IdleInTxTimeout %v: %v, want SQLSTATE 25P04 (transaction_timeout)",
					tc.setting, tc.idle, err)
			}
			if n := d.orders(); n != 0 {
				t.Fatalf("%d orders from a transaction that the server ended", n)
			}
		})
	}

	t.Run("shorter than LockTimeout: a blocked takeover is ErrTakeoverBlocked", func(t *testing.T) {
		t.Parallel()
		d, untimed := setup(t, "500ms")
		a := d.manager("a", nil)
		b := d.manager("b", func(c *leasepkg.Config) { c.LockTimeout = 5 * time.Second })
		la := d.acquire(a)
		tx, err := untimed.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := a.Fence(ctx, tx, la); err != nil {
			t.Fatal(err)
		}
		d.expire()
		_, err = b.Acquire(ctx)
		if !errors.Is(err, leasepkg.ErrTakeoverBlocked) {
			t.Fatalf("takeover behind an open fenced transaction, transaction_timeout 500ms, LockTimeout 5s: %v, want ErrTakeoverBlocked", err)
		}
		if !isCode(err, "25P04") {
			t.Errorf("takeover: %v, want it to wrap SQLSTATE 25P04", err)
		}
	})

	t.Run("shorter than the bump's wait: a per-renewal renewal extends without bumping", func(t *testing.T) {
		t.Parallel()
		d, untimed := setup(t, "500ms")
		// The bump waits up to a quarter of the renewal interval (5 s)
		// for the holder's own fenced transaction.
		m := d.manager("a", func(c *leasepkg.Config) {
			c.Policy = leasepkg.PerRenewal
			c.TTL, c.RenewInterval, c.LockTimeout = time.Minute, 20*time.Second, 10*time.Second
		})
		l := d.acquire(m)
		tx, err := untimed.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := m.Fence(ctx, tx, l); err != nil {
			t.Fatal(err)
		}
		renewed, err := m.Renew(ctx, l)
		if err != nil {
			t.Fatalf("renewal while the holder's fenced transaction is open, transaction_timeout 500ms: %v, want the lease extended", err)
		}
		if renewed.Epoch != l.Epoch {
			t.Fatalf("renewed at epoch %d, want %d (the bump must wait for the open transaction)", renewed.Epoch, l.Epoch)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("the holder's fenced transaction: %v", err)
		}
	})
}

// newPool is a pool with cfg's settings whose sessions set
// transaction_timeout to tt, or keep the server's if tt is empty; it is
// closed when the test ends.
func newPool(t *testing.T, cfg *pgxpool.Config, tt string) *pgxpool.Pool {
	t.Helper()
	cfg = cfg.Copy()
	if tt != "" {
		cfg.ConnConfig.RuntimeParams["transaction_timeout"] = tt
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// isCode says whether err is or wraps a server error with SQLSTATE code.
func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
