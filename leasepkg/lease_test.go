package leasepkg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

func TestAcquire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	a, b := d.manager("a", nil), d.manager("b", nil)

	la := d.acquire(a)
	if la.Epoch != 1 || la.Holder != "a" || la.Name != leaseName {
		t.Fatalf("first acquisition = %v, want %s@1 (a)", la, leaseName)
	}

	t.Run("held lease is a distinct error", func(t *testing.T) {
		_, err := b.Acquire(ctx)
		if !errors.Is(err, leasepkg.ErrLeaseHeld) {
			t.Fatalf("acquire of a held lease: %v, want ErrLeaseHeld", err)
		}
	})

	t.Run("takeover after expiry bumps the epoch", func(t *testing.T) {
		d.expire()
		lb := d.acquire(b)
		if lb.Epoch != la.Epoch+1 || lb.Holder != "b" {
			t.Fatalf("takeover = %v, want epoch %d held by b", lb, la.Epoch+1)
		}
		if _, err := a.Renew(ctx, la); !errors.Is(err, leasepkg.ErrLeaseLost) {
			t.Fatalf("renew by the old holder after takeover: %v, want ErrLeaseLost", err)
		}
	})
}

func TestRenew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		policy    leasepkg.EpochPolicy
		wantEpoch int64
	}{
		{"per term keeps the epoch", leasepkg.PerTerm, 1},
		{"per renewal bumps the epoch", leasepkg.PerRenewal, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			m := d.manager("a", func(c *leasepkg.Config) { c.Policy = tc.policy })
			l := d.acquire(m)
			before := d.count(`SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM worker_leases`)
			r, err := m.Renew(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if r.Epoch != tc.wantEpoch || d.epoch() != tc.wantEpoch {
				t.Fatalf("renewed to epoch %d (row %d), want %d", r.Epoch, d.epoch(), tc.wantEpoch)
			}
			if after := d.count(`SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM worker_leases`); after <= before {
				t.Fatalf("renewal did not extend expires_at: %d -> %d ms", before, after)
			}
		})
	}

	lostCases := []struct {
		name  string
		lease func(l leasepkg.Lease) leasepkg.Lease
		prep  func(d *db)
	}{
		{"wrong holder", func(l leasepkg.Lease) leasepkg.Lease { l.Holder = "intruder"; return l }, nil},
		{"wrong epoch", func(l leasepkg.Lease) leasepkg.Lease { l.Epoch++; return l }, nil},
		{"after expiry", nil, func(d *db) { d.expire() }},
	}
	for _, tc := range lostCases {
		t.Run(tc.name+" loses the lease", func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			m := d.manager("a", nil)
			l := d.acquire(m)
			if tc.lease != nil {
				l = tc.lease(l)
			}
			if tc.prep != nil {
				tc.prep(d)
			}
			_, err := m.Renew(ctx, l)
			if !errors.Is(err, leasepkg.ErrLeaseLost) {
				t.Fatalf("renew: %v, want ErrLeaseLost", err)
			}
			if got, want := leasepkg.ErrLeaseLost.Error(), "lost lease; refuse all writes"; got != want {
				t.Fatalf("ErrLeaseLost says %q, want %q", got, want)
			}
		})
	}
}

func TestRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	a, b := d.manager("a", nil), d.manager("b", nil)
	la := d.acquire(a)
	if err := a.Release(ctx, la); err != nil {
		t.Fatal(err)
	}
	if n := d.count(`SELECT count(*) FROM worker_leases`); n != 1 {
		t.Fatalf("release left %d lease rows, want the row kept (expired)", n)
	}
	if err := orders.AppendOrder(ctx, a, la, order(1)); !errors.Is(err, leasepkg.ErrStaleFence) {
		t.Fatalf("write after release: %v, want ErrStaleFence", err)
	}
	lb, err := b.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if lb.Epoch != la.Epoch+1 {
		t.Fatalf("acquire after release got epoch %d, want %d: epochs must never be reused", lb.Epoch, la.Epoch+1)
	}
	if err := a.Release(ctx, la); !errors.Is(err, leasepkg.ErrLeaseLost) {
		t.Fatalf("second release: %v, want ErrLeaseLost", err)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	d := newDB(t) // migrated once
	m := d.manager("a", nil)
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- m.Migrate(context.Background()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
}

func TestClosedManager(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	m := d.manager("a", nil)
	l := d.acquire(m)
	m.Close()
	m.Close() // twice is fine
	calls := map[string]error{
		"Acquire":     func() error { _, err := m.Acquire(ctx); return err }(),
		"Renew":       func() error { _, err := m.Renew(ctx, l); return err }(),
		"Release":     m.Release(ctx, l),
		"AppendOrder": orders.AppendOrder(ctx, m, l, order(1)),
		"Hold":        m.Hold(ctx, func(context.Context, *leasepkg.Term) error { return nil }),
		"Migrate":     m.Migrate(ctx),
	}
	for name, err := range calls {
		if !errors.Is(err, leasepkg.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if n := d.orders(); n != 0 {
		t.Fatalf("%d orders written after Close", n)
	}
}

// TestRenewAfterUnknownBump: under PerRenewal, a bump whose reply was lost
// may have committed; the holder's next renewal, still with the old epoch,
// renews its own later epoch instead of reporting the lease lost.
func TestRenewAfterUnknownBump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	m := d.manager("a", func(c *leasepkg.Config) { c.Policy = leasepkg.PerRenewal })
	l := d.acquire(m)
	if _, err := m.Renew(ctx, l); err != nil { // the bump the holder never heard of
		t.Fatal(err)
	}
	r, err := m.Renew(ctx, l)
	if err != nil || r.Epoch != l.Epoch+2 {
		t.Fatalf("renewal with the epoch before an unconfirmed bump: %v, %v; want epoch %d", r, err, l.Epoch+2)
	}
	d.expire()
	if _, err := d.manager("b", nil).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Renew(ctx, l); !errors.Is(err, leasepkg.ErrLeaseLost) {
		t.Fatalf("renewal after another holder's takeover: %v, want ErrLeaseLost", err)
	}
}

// TestSameHolderTwoProcesses: two processes configured with one holder id
// are two terms. Under PerRenewal, whose renewal accepts a later epoch of
// its own term, the first process must not renew the second's term after
// the second took the lease over; and neither is told that the lease is
// another holder's.
func TestSameHolderTwoProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	perRenewal := func(c *leasepkg.Config) { c.Policy = leasepkg.PerRenewal }
	p1, p2 := d.manager("a", perRenewal), d.manager("a", perRenewal)
	l1 := d.acquire(p1)

	_, err := p2.Acquire(ctx)
	if !errors.Is(err, leasepkg.ErrLeaseHeld) {
		t.Fatalf("second process's acquisition of the first's lease: %v, want ErrLeaseHeld", err)
	}
	if strings.Contains(err.Error(), "another holder") {
		t.Errorf("ErrLeaseHeld calls the caller's own holder id another holder: %v", err)
	}

	d.expire()
	l2 := d.acquire(p2)
	if r, err := p1.Renew(ctx, l1); !errors.Is(err, leasepkg.ErrLeaseLost) {
		t.Fatalf("first process renewed the second's term: %v, %v; want ErrLeaseLost", r, err)
	}
	r2, err := p2.Renew(ctx, l2)
	if err != nil {
		t.Fatalf("second process's renewal: %v", err)
	}
	if r2.Epoch != l2.Epoch+1 {
		t.Fatalf("second process renewed to epoch %d, want %d", r2.Epoch, l2.Epoch+1)
	}
}

// TestAcquireAfterUnknownOutcome: an acquisition that committed, though its
// reply never reached the holder, leaves the holder's own unexpired lease;
// the holder's next attempt resumes it (at a new epoch) rather than wait a
// TTL for a lease that the error would call another holder's.
func TestAcquireAfterUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	z := d.manager("z", nil)
	d.acquire(z)
	d.expire()
	a, _, proxy := d.managerBehindProxy("a", func(c *leasepkg.Config) { c.LockTimeout = 30 * time.Second })

	// A transaction of the test's holds the row, so that the takeover waits
	// with its whole batch, COMMIT included, on the server.
	lock, err := d.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if _, err := lock.Exec(ctx, `SELECT 1 FROM worker_leases FOR KEY SHARE`); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := a.Acquire(actx); first <- err }()
	d.waitForLockWait("UPDATE worker_leases")
	// The reply will not get through: the takeover commits, unheard.
	resume := proxy.Stall()
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	d.poll("the takeover to commit", `SELECT holder = 'a' FROM worker_leases`)
	cancel()
	if err := <-first; !errors.Is(err, leasepkg.ErrOutcomeUnknown) {
		t.Fatalf("acquisition whose reply was lost: %v, want ErrOutcomeUnknown", err)
	}
	resume()
	granted := d.epoch()

	l, err := a.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquisition after an unknown outcome, with the lease the holder's own (epoch %d): %v", granted, err)
	}
	if l.Holder != "a" || l.Epoch <= granted {
		t.Fatalf("resumed %v, want holder a above epoch %d", l, granted)
	}
	if err := orders.AppendOrder(ctx, a, l, order(1)); err != nil {
		t.Fatal(err)
	}
}
