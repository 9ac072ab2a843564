package leasepkg_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestAppendOrder: writes through examples/orders, fenced by Tx, land
// with their lease's epoch only while it holds, all or none, and a key
// written already is ErrDuplicate.
func TestAppendOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rejected := []struct {
		name  string
		lease func(l leasepkg.Lease) leasepkg.Lease
		prep  func(d *db)
	}{
		{"stale epoch", func(l leasepkg.Lease) leasepkg.Lease { l.Epoch--; return l }, nil},
		{"future epoch", func(l leasepkg.Lease) leasepkg.Lease { l.Epoch++; return l }, nil},
		{"wrong holder", func(l leasepkg.Lease) leasepkg.Lease { l.Holder = "intruder"; return l }, nil},
		{"expired lease", nil, func(d *db) { d.expire() }},
		{"other lease name", func(l leasepkg.Lease) leasepkg.Lease { l.Name = "elsewhere"; return l }, nil},
	}
	for _, tc := range rejected {
		t.Run(tc.name+" is rejected with nothing written", func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			var events []leasepkg.Event
			m := d.manager("a", func(c *leasepkg.Config) {
				c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) { events = append(events, e) })
			})
			l := d.acquire(m)
			l.Epoch++ // move to epoch 2, so that a stale epoch (1) exists
			d.exec(`UPDATE worker_leases SET epoch = 2`)
			if tc.lease != nil {
				l = tc.lease(l)
			}
			if tc.prep != nil {
				tc.prep(d)
			}
			err := orders.AppendOrder(ctx, m, l, order(1))
			if !errors.Is(err, leasepkg.ErrStaleFence) {
				t.Fatalf("AppendOrder: %v, want ErrStaleFence", err)
			}
			if err := orders.AppendOrders(ctx, m, l, []orders.Order{order(2), order(3)}); !errors.Is(err, leasepkg.ErrStaleFence) {
				t.Fatalf("AppendOrders: %v, want ErrStaleFence", err)
			}
			if n := d.orders(); n != 0 {
				t.Fatalf("%d orders written by rejected writes", n)
			}
			m.Close() // delivers the events queued for the observer
			if last := events[len(events)-1]; last.Kind != leasepkg.WriteRejected || !errors.Is(last.Err, leasepkg.ErrStaleFence) {
				t.Fatalf("last event %v, want a WriteRejected", last)
			}
			if got, want := leasepkg.ErrStaleFence.Error(), "stale fence; drop the write"; got != want {
				t.Fatalf("ErrStaleFence says %q, want %q", got, want)
			}
		})
	}

	t.Run("the holder's writes land with their epoch", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		if err := orders.AppendOrder(ctx, m, l, order(1)); err != nil {
			t.Fatal(err)
		}
		batch := []orders.Order{order(2), order(3), order(4)}
		if err := orders.AppendOrders(ctx, m, l, batch); err != nil {
			t.Fatal(err)
		}
		if n := d.count(`SELECT count(*) FROM orders WHERE epoch = $1 AND holder = 'a' AND lease_name = $2`, l.Epoch, leaseName); n != 4 {
			t.Fatalf("%d orders under %v, want 4", n, l)
		}
	})

	t.Run("a duplicate key is its own error and the batch lands none", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		if err := orders.AppendOrder(ctx, m, l, order(1)); err != nil {
			t.Fatal(err)
		}
		if err := orders.AppendOrder(ctx, m, l, order(1)); !errors.Is(err, orders.ErrDuplicate) {
			t.Fatalf("second write of one key: %v, want orders.ErrDuplicate", err)
		}
		if err := orders.AppendOrders(ctx, m, l, []orders.Order{order(2), order(1)}); !errors.Is(err, orders.ErrDuplicate) {
			t.Fatalf("batch with a written key: %v, want orders.ErrDuplicate", err)
		}
		if n := d.orders(); n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		if err := orders.AppendOrder(ctx, m, l, orders.Order{}); err == nil {
			t.Fatal("empty key accepted")
		}
		if err := orders.AppendOrders(ctx, m, l, []orders.Order{order(1), {}}); err == nil {
			t.Fatal("empty key in a batch accepted")
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		err := orders.AppendOrder(cancelled, m, l, order(2))
		if !errors.Is(err, context.Canceled) || errors.Is(err, leasepkg.ErrOutcomeUnknown) {
			t.Fatalf("write on a cancelled context: %v, want context.Canceled and a known outcome", err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written by bad input", n)
		}
	})
}

// TestCancelledBeforeCommit: a fenced transaction whose context ends while
// its fence waits for the lease row never sent its commit: its outcome is
// known, nothing written, and it says so rather than ErrOutcomeUnknown
// (TestCommitError has the commits whose outcome is not).
func TestCancelledBeforeCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	m := d.manager("a", nil)
	l := d.acquire(m)
	// Hold the lease row so that the fence waits once sent.
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM worker_leases FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- orders.AppendOrder(wctx, m, l, order(1)) }()
	d.waitForLockWait(fenceStatement)
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) || errors.Is(err, leasepkg.ErrOutcomeUnknown) || errors.Is(err, leasepkg.ErrStaleFence) {
		t.Fatalf("write cancelled in its fence: %v, want context.Canceled and a known outcome", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	d.waitUntilNone(fenceStatement)
	if n := d.orders(); n != 0 {
		t.Fatalf("%d orders after a write cancelled before its commit", n)
	}
}

// TestCommitError: an error that the server sends for a COMMIT does not
// always mean that nothing committed. A backend terminated while it commits
// (here by a deferred trigger, as an administrator or a shutdown would)
// answers 57P01 and closes the connection, and a pooler can answer class 08
// after forwarding the commit: the outcome is unknown.
func TestCommitError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a backend terminated in its commit", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		l := d.acquire(m)
		d.exec(`CREATE FUNCTION terminate_self() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_terminate_backend(pg_backend_pid());
	PERFORM pg_sleep(10);
	RETURN NULL;
END $$`)
		d.exec(`CREATE CONSTRAINT TRIGGER terminate_self AFTER INSERT ON orders
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION terminate_self()`)
		for what, err := range map[string]error{
			"AppendOrders": orders.AppendOrders(ctx, m, l, []orders.Order{order(1), order(2)}),
			"AppendOrder":  orders.AppendOrder(ctx, m, l, order(3)),
		} {
			var pgErr *pgconn.PgError
			if !errors.Is(err, leasepkg.ErrOutcomeUnknown) || !errors.As(err, &pgErr) || pgErr.Code != "57P01" {
				t.Errorf("%s terminated in its commit: %v, want ErrOutcomeUnknown from 57P01", what, err)
			}
		}
	})

	t.Run("which server errors leave the outcome unknown", func(t *testing.T) {
		t.Parallel()
		for code, unknown := range map[string]bool{
			"08006": true,  // connection_failure
			"08P01": true,  // protocol_violation
			"57P01": true,  // admin_shutdown
			"57P02": true,  // crash_shutdown
			"40003": true,  // statement_completion_unknown
			"40001": false, // serialization_failure: rolled back
			"23505": false, // unique_violation: rolled back
			"55P03": false, // lock_not_available: rolled back
			"57014": false, // query_canceled: rolled back
		} {
			err := leasepkg.OutcomeError(&pgconn.PgError{Code: code})
			if got := errors.Is(err, leasepkg.ErrOutcomeUnknown); got != unknown {
				t.Errorf("commit failed with %s: outcome unknown %v, want %v", code, got, unknown)
			}
		}
	})
}

// TestOverlappingWriters: four writers each keep a fenced transaction open
// 60 ms, so that the lease row is almost always under some writer's FOR KEY
// SHARE. Under PerRenewal the epoch bump must wait for those writers; it
// waits at most its lock timeout and the renewal then extends the lease
// without bumping, so a busy holder keeps its lease under both policies.
func TestOverlappingWriters(t *testing.T) {
	t.Parallel()
	for _, policy := range []leasepkg.EpochPolicy{leasepkg.PerTerm, leasepkg.PerRenewal} {
		t.Run(policy.String(), func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			var renewed, failed, epoch atomic.Int64
			m := d.manager("a", func(c *leasepkg.Config) {
				c.Policy = policy
				c.TTL, c.RenewInterval = 1500*time.Millisecond, 300*time.Millisecond
				c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
					switch e.Kind {
					case leasepkg.Renewed:
						renewed.Add(1)
						epoch.Store(e.Lease.Epoch)
					case leasepkg.RenewFailed:
						if failed.Add(1) == 1 {
							t.Logf("first failed renewal: %v", e.Err)
						}
					}
				})
			})
			var written, rejected, seq atomic.Int64
			err := m.Hold(context.Background(), func(ctx context.Context, term *leasepkg.Term) error {
				wctx, cancel := context.WithTimeout(ctx, 3*time.Second) // two TTLs
				defer cancel()
				errs := make(chan error, 4)
				for range 4 {
					go func() {
						errs <- writeUntil(wctx, func() error {
							return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
								if err := orders.AppendOrderTx(ctx, m, tx, term.Lease(), order(int(seq.Add(1)))); err != nil {
									return err
								}
								_, err := tx.Exec(ctx, `SELECT pg_sleep(0.06)`)
								return err
							})
						}, &written, &rejected)
					}()
				}
				return errors.Join(<-errs, <-errs, <-errs, <-errs)
			})
			m.Close() // delivers the events queued for the observer
			t.Logf("%v: %d renewals ok (%d bumped the epoch), %d failed, %d writes committed, %d rejected by the holder's own lease; Hold: %v",
				policy, renewed.Load(), max(epoch.Load()-1, 0), failed.Load(), written.Load(), rejected.Load(), err)
			if err != nil {
				t.Fatalf("Hold under overlapping writers: %v", err)
			}
			if renewed.Load() == 0 || written.Load() == 0 {
				t.Fatalf("%d renewals and %d writes in two ttls", renewed.Load(), written.Load())
			}
		})
	}
}

// writeUntil runs write until ctx is done, counting the writes that
// committed and those that the fence rejected; any other error ends it.
func writeUntil(ctx context.Context, write func() error, written, rejected *atomic.Int64) error {
	for ctx.Err() == nil {
		err := write()
		switch {
		case err == nil:
			written.Add(1)
		case errors.Is(err, leasepkg.ErrStaleFence):
			rejected.Add(1)
		case ctx.Err() != nil:
			return nil
		default:
			return err
		}
	}
	return nil
}
