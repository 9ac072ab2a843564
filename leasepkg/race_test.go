package leasepkg_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/leasepkg"
)

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
		go func() { wrote <- orders.AppendOrder(ctx, a, la, order(1)) }()
		d.waitForLockWait(fenceStatement)
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
			err := orders.AppendOrder(ctx, m, l, order(1))
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
						return orders.AppendOrderTx(ctx, m, tx, token, order(i))
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
		testdir.Unavailable(t, "negative control: needs leasepkg.Weaken, in builds with -tags leaseguard_weaken")
	}
	return func(ctx context.Context, tx pgx.Tx, m *leasepkg.Manager, l leasepkg.Lease) error {
		if err := weaken(m, part); err != nil {
			return err
		}
		return orders.AppendOrderTx(ctx, m, tx, l, order(1))
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
			return orders.AppendOrderTx(ctx, m, tx, l, order(1))
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
