package leasepkg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestStopMargin: a term whose renewals stall has its context cancelled
// before the lease expires by the database's clock, as the last confirmed
// renewal left it: the database still says the lease is unexpired when fn
// sees its context done. Renewals stall because another session holds the
// lease row FOR UPDATE, so the database is reachable but confirms nothing;
// the expiry that the test compares against is the database's expires_at,
// read back, not a timer of the test's.
func TestStopMargin(t *testing.T) {
	t.Parallel()
	timings := func(c *leasepkg.Config) {
		c.TTL = 3 * time.Second
		c.RenewInterval = 500 * time.Millisecond
		c.LockTimeout = 500 * time.Millisecond
	}
	for _, tc := range []struct {
		name   string
		margin time.Duration
		client bool
	}{
		{"a Manager, default margin", 0, false},
		{"a Manager, a margin of 1s", time.Second, false},
		{"a Client's Manager, a margin of 1s", time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			edit := func(c *leasepkg.Config) {
				timings(c)
				c.StopMargin = tc.margin
			}
			var m *leasepkg.Manager
			if tc.client {
				var err error
				if m, err = newClient(t, d.pool, "a", edit).Manager(leaseName); err != nil {
					t.Fatal(err)
				}
			} else {
				m = d.manager("a", edit)
			}
			err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
				unexpired, left := stallRenewals(t, d, ctx)
				if !unexpired {
					t.Errorf("fn's context was done %v after the lease expired by the database's clock, want before", left)
				} else {
					t.Logf("fn's context was done %v before the lease expired by the database's clock", left)
				}
				if !errors.Is(context.Cause(ctx), leasepkg.ErrLeaseLost) {
					t.Errorf("cause %v, want ErrLeaseLost", context.Cause(ctx))
				}
				return ctx.Err()
			})
			if !errors.Is(err, leasepkg.ErrLeaseLost) {
				t.Fatalf("Hold: %v, want ErrLeaseLost", err)
			}
		})
	}
}

// stallRenewals locks the lease row FOR UPDATE in a transaction of its
// own until ctx is done, so that renewals wait and none is confirmed, and
// returns what the database says of the lease then, before the lock is
// let go (a renewal waiting for it could otherwise still commit): whether
// it is unexpired by the database's clock, and for how long.
func stallRenewals(t *testing.T, d *db, ctx context.Context) (unexpired bool, left time.Duration) {
	t.Helper()
	bg := context.Background()
	tx, err := d.pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg)
	if _, err := tx.Exec(bg, `SELECT 1 FROM worker_leases WHERE name = $1 FOR UPDATE`, leaseName); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the term's context was not cancelled within a minute of stalled renewals")
	}
	if err := d.pool.QueryRow(bg, `SELECT expires_at > clock_timestamp(), greatest(expires_at - clock_timestamp(), clock_timestamp() - expires_at)
  FROM worker_leases WHERE name = $1`, leaseName).Scan(&unexpired, &left); err != nil {
		t.Fatal(err)
	}
	return unexpired, left
}
