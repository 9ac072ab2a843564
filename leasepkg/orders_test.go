package leasepkg_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leaseguard/leaseguard/leasepkg"
)

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
			err := m.AppendOrder(ctx, l, order(1))
			if !errors.Is(err, leasepkg.ErrStaleFence) {
				t.Fatalf("AppendOrder: %v, want ErrStaleFence", err)
			}
			if err := m.AppendOrders(ctx, l, []leasepkg.Order{order(2), order(3)}); !errors.Is(err, leasepkg.ErrStaleFence) {
				t.Fatalf("AppendOrders: %v, want ErrStaleFence", err)
			}
			if n := d.orders(); n != 0 {
				t.Fatalf("%d orders written by rejected writes", n)
			}
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
		if err := m.AppendOrder(ctx, l, order(1)); err != nil {
			t.Fatal(err)
		}
		batch := []leasepkg.Order{order(2), order(3), order(4)}
		if err := m.AppendOrders(ctx, l, batch); err != nil {
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
		if err := m.AppendOrder(ctx, l, order(1)); err != nil {
			t.Fatal(err)
		}
		if err := m.AppendOrder(ctx, l, order(1)); !errors.Is(err, leasepkg.ErrDuplicateOrder) {
			t.Fatalf("second write of one key: %v, want ErrDuplicateOrder", err)
		}
		if err := m.AppendOrders(ctx, l, []leasepkg.Order{order(2), order(1)}); !errors.Is(err, leasepkg.ErrDuplicateOrder) {
			t.Fatalf("batch with a written key: %v, want ErrDuplicateOrder", err)
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
		if err := m.AppendOrder(ctx, l, leasepkg.Order{}); err == nil {
			t.Fatal("empty key accepted")
		}
		if err := m.AppendOrders(ctx, l, []leasepkg.Order{order(1), {}}); err == nil {
			t.Fatal("empty key in a batch accepted")
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		err := m.AppendOrder(cancelled, l, order(2))
		if !errors.Is(err, context.Canceled) || errors.Is(err, leasepkg.ErrOutcomeUnknown) {
			t.Fatalf("write on a cancelled context: %v, want context.Canceled and a known outcome", err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written by bad input", n)
		}
	})
}

// TestOutcomeUnknown: a write whose context ends after it was sent cannot
// know whether it committed, and says so rather than reporting a rejection.
func TestOutcomeUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	m := d.manager("a", nil)
	l := d.acquire(m)
	// Hold the lease row so that the fenced statement waits once sent.
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
	go func() { done <- m.AppendOrder(wctx, l, order(1)) }()
	d.waitForLockWait("INSERT INTO orders")
	cancel()
	err = <-done
	if !errors.Is(err, leasepkg.ErrOutcomeUnknown) || errors.Is(err, leasepkg.ErrStaleFence) {
		t.Fatalf("write cancelled in flight: %v, want ErrOutcomeUnknown", err)
	}
	// Released, the statement may still run to its commit if the server
	// had not yet seen the cancellation: that is why the outcome is unknown.
	// Either way the write went through the fence.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	d.waitUntilNone("INSERT INTO orders")
	if n, fenced := d.orders(), d.count(`SELECT count(*) FROM orders WHERE epoch = $1 AND order_key = 'order-1'`, l.Epoch); n > 1 || n != fenced {
		t.Fatalf("%d orders (%d of them the fenced write) after one write of unknown outcome", n, fenced)
	}
}

// TestFenceRowLockClosesRace forces the READ COMMITTED interleaving: a
// fenced write passes its check, the lease expires, a takeover runs, and
// only then does the write commit. With FOR KEY SHARE the takeover waits for
// the write and the write commits first; without it (the negative control,
// which needs leasepkg.Weaken) the takeover commits at once and the stale
// write lands after it.
func TestFenceRowLockClosesRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		weaken    string // the part of the fence removed, as leasepkg.Weaken names it
		wantStale int
	}{
		{"with the row lock the takeover waits", "", 0},
		{"without the row lock the stale write lands", "lock", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var write fencedWrite
			if tc.weaken != "" {
				write = weakened(t, tc.weaken)
			}
			if got := raceTakeover(t, nil, write, tc.weaken == ""); got != tc.wantStale {
				t.Fatalf("%d orders committed after the takeover of their epoch, want %d", got, tc.wantStale)
			}
		})
	}

	t.Run("a write queued behind a takeover writes nothing", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a := d.manager("a", nil)
		la := d.acquire(a)
		// An epoch change in flight, held open. A takeover proper needs an
		// expired row, which a writer's fence rejects before it ever asks for
		// the lock, so the row is changed here without waiting for expiry:
		// the writer sees a valid lease in its snapshot and must queue.
		takeover, err := d.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer takeover.Rollback(ctx)
		if _, err := takeover.Exec(ctx, `UPDATE worker_leases SET holder = 'b', epoch = epoch + 1 WHERE name = $1`, leaseName); err != nil {
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() { wrote <- a.AppendOrder(ctx, la, order(1)) }()
		d.waitForLockWait("INSERT INTO orders")
		if err := takeover.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-wrote; !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Fatalf("write that waited behind the takeover: %v, want ErrStaleFence", err)
		}
		if n := d.orders(); n != 0 {
			t.Fatalf("%d orders written", n)
		}
	})
}

// TestEpochPolicy runs one workload under both policies: each write takes
// the current token, spends time in its transaction, then reaches its fence.
// Bumping the epoch on every renewal rejects the holder's own writes that
// straddle a renewal; bumping it per term rejects none.
func TestEpochPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a token taken before a renewal", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			policy   leasepkg.EpochPolicy
			rejected bool
		}{{leasepkg.PerTerm, false}, {leasepkg.PerRenewal, true}} {
			d := newDB(t)
			m := d.manager("a", func(c *leasepkg.Config) { c.Policy = tc.policy })
			l := d.acquire(m)
			if _, err := m.Renew(ctx, l); err != nil {
				t.Fatal(err)
			}
			err := m.AppendOrder(ctx, l, order(1))
			if got := errors.Is(err, leasepkg.ErrStaleFence); got != tc.rejected {
				t.Errorf("%v: write with the pre-renewal token: %v, rejected=%v want %v", tc.policy, err, got, tc.rejected)
			}
		}
	})

	const renewals = 5
	for _, tc := range []struct {
		policy       leasepkg.EpochPolicy
		wantRejected bool
	}{{leasepkg.PerTerm, false}, {leasepkg.PerRenewal, true}} {
		t.Run(tc.policy.String()+" under Hold", func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			var renewed atomic.Int64
			m := d.manager("a", func(c *leasepkg.Config) {
				c.Policy = tc.policy
				c.TTL = 3 * time.Second
				c.RenewInterval = 100 * time.Millisecond
				c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
					if e.Kind == leasepkg.Renewed {
						renewed.Add(1)
					}
				})
			})
			var written, rejected int
			err := m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
				ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				for i := 0; renewed.Load() < renewals; i++ {
					err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
						token := term.Lease()
						if _, err := tx.Exec(ctx, `SELECT pg_sleep(0.03)`); err != nil {
							return err
						}
						return m.AppendOrderTx(ctx, tx, token, order(i))
					})
					switch {
					case err == nil:
						written++
					case errors.Is(err, leasepkg.ErrStaleFence):
						rejected++
					default:
						return fmt.Errorf("write %d: %w", i, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v: %d writes, %d rejected by their own holder's lease, over %d renewals", tc.policy, written+rejected, rejected, renewed.Load())
			if got := rejected > 0; got != tc.wantRejected {
				t.Fatalf("%v: %d self-rejections, want any=%v", tc.policy, rejected, tc.wantRejected)
			}
			if n := d.orders(); n != written {
				t.Fatalf("%d orders in the table, %d acknowledged", n, written)
			}
		})
	}
}

// A fencedWrite makes the holder's fenced write of order(1) under l in tx;
// m is the holder's Manager. It returns an error if the fence refused the
// write.
type fencedWrite func(ctx context.Context, tx pgx.Tx, m *leasepkg.Manager, l leasepkg.Lease) error

// weaken is leasepkg.Weaken in builds with the leaseguard_weaken tag
// (weaken_test.go), nil in others.
var weaken func(m *leasepkg.Manager, part string) error

// weakened returns AppendOrderTx's write of order(1) through the holder's
// fence with part removed by leasepkg.Weaken. In a build without the
// leaseguard_weaken tag it skips the test, or fails it if CI is set, since
// the CI's test command sets the tag.
func weakened(t *testing.T, part string) fencedWrite {
	t.Helper()
	if weaken == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("negative control without leasepkg.Weaken, and CI is set: test with -tags leaseguard_weaken")
		}
		t.Skip("negative control: needs leasepkg.Weaken, in builds with -tags leaseguard_weaken")
	}
	return func(ctx context.Context, tx pgx.Tx, m *leasepkg.Manager, l leasepkg.Lease) error {
		if err := weaken(m, part); err != nil {
			return err
		}
		return m.AppendOrderTx(ctx, tx, l, order(1))
	}
}

// raceTakeover forces the READ COMMITTED interleaving that a fence's row
// lock exists to close: the holder's fenced write passes its fence and stays
// open while the lease expires (with time, by the database's clock) and
// another holder takes over; then the write commits. prep, if not nil,
// changes the migrated database first (to drift its schema); write, if not
// nil, makes the holder's write in place of Manager.AppendOrderTx (through
// a weakened fence, or another statement). locked says whether the takeover
// is expected to wait for the write. It returns how many orders committed
// after the takeover of their epoch.
func raceTakeover(t *testing.T, prep func(*db), write fencedWrite, locked bool) int {
	t.Helper()
	ctx := context.Background()
	d := newDB(t)
	if prep != nil {
		prep(d)
	}
	// A short TTL, so that the lease can expire with time rather than by an
	// update of its row, which a fence under FOR SHARE would make wait. The
	// fenced transaction idles past the lease's expiry, so the session's
	// idle timeout is as long as it may be, and the lease is made to expire
	// soon before the fence.
	a := d.manager("a", func(c *leasepkg.Config) {
		c.TTL, c.RenewInterval, c.IdleInTxTimeout = 2*time.Second, 500*time.Millisecond, 1999*time.Millisecond
	})
	if write == nil {
		write = func(ctx context.Context, tx pgx.Tx, m *leasepkg.Manager, l leasepkg.Lease) error {
			return m.AppendOrderTx(ctx, tx, l, order(1))
		}
	}
	b := d.manager("b", func(c *leasepkg.Config) { c.LockTimeout = 30 * time.Second })
	la := d.acquire(a)
	d.exec(`UPDATE worker_leases SET expires_at = clock_timestamp() + interval '600 milliseconds'`)

	// 1. The old holder's write passes its fence and stays open.
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := write(ctx, tx, a, la); err != nil {
		t.Fatal(err)
	}

	// 2. The lease expires and b takes it over.
	d.poll("the lease to expire", `SELECT expires_at <= clock_timestamp() FROM worker_leases WHERE name = $1`, leaseName)
	taken := make(chan error, 1)
	go func() { _, err := b.Acquire(ctx); taken <- err }()
	if locked {
		d.waitForLockWait("UPDATE worker_leases")
		select {
		case err := <-taken:
			t.Fatalf("takeover finished while a fenced write held the row: %v", err)
		default:
		}
	} else if err := <-taken; err != nil {
		t.Fatalf("takeover: %v", err)
	}

	// 3. The old write commits.
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if locked {
		if err := <-taken; err != nil {
			t.Fatalf("takeover after the write committed: %v", err)
		}
	}
	if got := d.epoch(); got != la.Epoch+1 {
		t.Fatalf("lease epoch %d after takeover, want %d", got, la.Epoch+1)
	}
	return d.staleOrders()
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
			"AppendOrders": m.AppendOrders(ctx, l, []leasepkg.Order{order(1), order(2)}),
			"AppendOrder":  m.AppendOrder(ctx, l, order(3)),
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
								if err := m.AppendOrderTx(ctx, tx, term.Lease(), order(int(seq.Add(1)))); err != nil {
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
