package leasepkg_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// jobsTable is a table of the user's own that a fence guards.
const jobsTable = `CREATE TABLE jobs (id text PRIMARY KEY, epoch bigint NOT NULL)`

func insertJob(id string, epoch int64) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO jobs (id, epoch) VALUES ($1, $2)`, id, epoch)
		return err
	}
}

func TestFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("fences writes to the user's own table", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		d.exec(jobsTable)
		a, b := d.manager("a", nil), d.manager("b", nil)
		la := d.acquire(a)
		if err := a.Tx(ctx, la, insertJob("j1", la.Epoch)); err != nil {
			t.Fatal(err)
		}
		d.expire()
		d.acquire(b)
		if err := a.Tx(ctx, la, insertJob("j2", la.Epoch)); !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Fatalf("Tx under a taken-over lease: %v, want ErrStaleFence", err)
		}
		if n := d.count(`SELECT count(*) FROM jobs`); n != 1 {
			t.Fatalf("%d jobs, want the 1 written under the lease", n)
		}
	})

	t.Run("in a repeatable read transaction is refused", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		a := d.manager("a", nil)
		la := d.acquire(a)
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := a.Fence(ctx, tx, la); !errors.Is(err, leasepkg.ErrIsolation) {
			t.Fatalf("Fence: %v, want ErrIsolation", err)
		}
	})

	// The race of TestFenceRowLockClosesRace, on the user's table: the
	// fenced transaction stays open past the lease's expiry while another
	// holder takes over. With the epoch index and without it, the
	// takeover waits and the job commits before it.
	for _, tc := range []struct {
		name string
		prep func(*db)
	}{{"the takeover waits for a fenced transaction", nil}, {"the takeover waits without the epoch index", dropEpochIndex}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			d.exec(jobsTable)
			if tc.prep != nil {
				tc.prep(d)
			}
			a := d.manager("a", func(c *leasepkg.Config) { c.IdleInTxTimeout = 30 * time.Second })
			b := d.manager("b", func(c *leasepkg.Config) { c.LockTimeout = 30 * time.Second })
			la := d.acquire(a)
			d.exec(`UPDATE worker_leases SET expires_at = clock_timestamp() + interval '300 milliseconds'`)
			tx, err := d.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if err := a.Fence(ctx, tx, la); err != nil {
				t.Fatal(err)
			}
			if err := insertJob("j1", la.Epoch)(ctx, tx); err != nil {
				t.Fatal(err)
			}
			d.poll("the lease to expire", `SELECT expires_at <= clock_timestamp() FROM worker_leases`)
			taken := make(chan error, 1)
			go func() { _, err := b.Acquire(ctx); taken <- err }()
			d.waitForLockWait("UPDATE worker_leases")
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-taken; err != nil {
				t.Fatal(err)
			}
			stale := d.count(`SELECT count(*) FROM jobs j, worker_leases l
 WHERE j.epoch < l.epoch AND pg_xact_commit_timestamp(j.xmin) > pg_xact_commit_timestamp(l.xmin)`)
			if stale != 0 {
				t.Fatalf("%d jobs committed after the takeover of their epoch", stale)
			}
		})
	}
}

func TestCampaign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	a := d.manager("a", nil)
	la := d.acquire(a)
	fast := func(c *leasepkg.Config) { c.TTL, c.RenewInterval = 2*time.Second, 200*time.Millisecond }

	t.Run("gives up when its context ends", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		err := d.manager("c", fast).Campaign(cctx, func(context.Context, *leasepkg.Term) error {
			t.Error("campaign ran fn while another held the lease")
			return nil
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Campaign: %v, want context.DeadlineExceeded", err)
		}
	})

	t.Run("acquires once the holder resigns", func(t *testing.T) {
		var ran atomic.Bool
		done := make(chan error, 1)
		go func() {
			done <- d.manager("b", fast).Campaign(ctx, func(_ context.Context, term *leasepkg.Term) error {
				ran.Store(true)
				if got := term.Lease(); got.Epoch != la.Epoch+1 || got.Holder != "b" {
					t.Errorf("campaign acquired %v, want epoch %d held by b", got, la.Epoch+1)
				}
				return nil
			})
		}()
		if err := a.Resign(ctx, la); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || !ran.Load() {
			t.Fatalf("Campaign: %v (fn ran: %v)", err, ran.Load())
		}
	})
}

func TestLeaderObserve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	a, b := d.manager("a", nil), d.manager("b", nil)
	if info, err := a.Leader(ctx); err != nil || info.Held || info.Lease.Holder != "" {
		t.Fatalf("Leader of a lease never acquired: %+v, %v", info, err)
	}

	// o reads the row again only every 20 s: it sees what notifications
	// tell it. p reads it every 200 ms, and sees changes that no statement
	// notified.
	o := d.manager("o", nil)
	p := d.manager("p", func(c *leasepkg.Config) {
		c.TTL, c.RenewInterval, c.LockTimeout = time.Second, 200*time.Millisecond, 100*time.Millisecond
	})
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	observe := func(m *leasepkg.Manager) (next func(what string, want func(leasepkg.LeaderInfo) bool), stopped <-chan error) {
		seen := make(chan leasepkg.LeaderInfo, 16)
		done := make(chan error, 1)
		go func() { done <- m.Observe(octx, func(info leasepkg.LeaderInfo) { seen <- info }) }()
		return func(what string, want func(leasepkg.LeaderInfo) bool) {
			t.Helper()
			for {
				select {
				case info := <-seen:
					if want(info) {
						return
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("observer did not see %s", what)
				}
			}
		}, done
	}
	next, stopped := observe(o)
	held := func(holder string, epoch int64) func(leasepkg.LeaderInfo) bool {
		return func(i leasepkg.LeaderInfo) bool { return i.Held && i.Lease.Holder == holder && i.Lease.Epoch == epoch }
	}

	next("no leader", func(i leasepkg.LeaderInfo) bool { return !i.Held })
	la := d.acquire(a)
	next("a lead", held("a", la.Epoch))
	if info, err := a.Leader(ctx); err != nil || info != (leasepkg.LeaderInfo{Lease: la, ExpiresAt: info.ExpiresAt, Held: true, Remaining: info.Remaining}) || info.Remaining <= 0 {
		t.Fatalf("Leader while a holds: %+v, %v", info, err)
	}
	if err := a.Resign(ctx, la); err != nil {
		t.Fatal(err)
	}
	next("a resign", func(i leasepkg.LeaderInfo) bool { return !i.Held && i.Lease.Holder == "a" })
	lb := d.acquire(b)
	next("b lead", held("b", lb.Epoch))

	// No statement of the package's notifies this change: polling sees it.
	next, _ = observe(p)
	next("b lead", held("b", lb.Epoch))
	d.exec(`UPDATE worker_leases SET holder = 'z', epoch = epoch + 1`)
	next("a change without a notification", held("z", lb.Epoch+1))

	// The listening connection dies: the observer connects again.
	d.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT holder, epoch, expires_at%'`)
	d.exec(`UPDATE worker_leases SET holder = 'y', epoch = epoch + 1`)
	next("a change after the connection was lost", held("y", lb.Epoch+2))

	cancel()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("Observe after its context ended: %v", err)
	}
}
