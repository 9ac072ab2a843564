package leasepkg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestHealthy: Healthy is nil while a Manager does not lead and while it
// leads with its renewals confirmed; once another session holds the lease
// row FOR UPDATE, so that renewals wait and none is confirmed, it says how
// long since the last confirmed one; and it is nil again once a renewal is
// confirmed, and after the term ends. A Client's Healthy says the same of
// its Managers.
func TestHealthy(t *testing.T) {
	t.Parallel()
	timings := func(c *leasepkg.Config) {
		c.TTL = 10 * time.Second
		c.RenewInterval = time.Second
		c.LockTimeout = time.Second
	}
	for _, client := range []bool{false, true} {
		name := "a Manager"
		if client {
			name = "a Client"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			var m *leasepkg.Manager
			healthy := func() error { return m.Healthy() }
			if client {
				c := newClient(t, d.pool, "a", timings)
				var err error
				if m, err = c.Manager(leaseName); err != nil {
					t.Fatal(err)
				}
				healthy = c.Healthy
			} else {
				m = d.manager("a", timings)
			}
			if err := healthy(); err != nil {
				t.Fatalf("Healthy before leading: %v, want nil", err)
			}
			err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
				if err := healthy(); err != nil {
					t.Errorf("Healthy just after acquiring: %v, want nil", err)
				}
				tx, err := d.pool.Begin(context.Background())
				if err != nil {
					return err
				}
				defer tx.Rollback(context.Background())
				if _, err := tx.Exec(context.Background(), `SELECT 1 FROM worker_leases WHERE name = $1 FOR UPDATE`, leaseName); err != nil {
					return err
				}
				stalled := waitHealth(t, ctx, healthy, false)
				if !errors.Is(stalled, leasepkg.ErrRenewalStalled) || !strings.Contains(stalled.Error(), "no renewal confirmed for ") {
					t.Errorf("Healthy with renewals stalled: %v, want ErrRenewalStalled saying for how long", stalled)
				}
				t.Logf("stalled: %v", stalled)
				if err := tx.Rollback(context.Background()); err != nil {
					return err
				}
				_ = waitHealth(t, ctx, healthy, true) // nil: want is true
				return ctx.Err()
			})
			if err != nil {
				t.Fatalf("Hold: %v", err)
			}
			if err := healthy(); err != nil {
				t.Fatalf("Healthy after Hold returned: %v, want nil", err)
			}
		})
	}
}

// waitHealth polls healthy until it returns nil (want true) or an error
// (want false), and returns that; it fails the test if ctx, the term's,
// ends first, or after a minute.
func waitHealth(t *testing.T, ctx context.Context, healthy func() error, want bool) error {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(time.Minute)
	for {
		err := healthy()
		if (err == nil) == want {
			return err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the term ended (%v) before Healthy said %v", context.Cause(ctx), map[bool]string{true: "nil", false: "an error"}[want])
		case <-limit:
			t.Fatalf("Healthy still %v after a minute", err)
		case <-tick.C:
		}
	}
}

// TestHealthyFunctionGoesOn: a term whose context was cancelled, its
// renewals stalled, while its function goes on is unhealthy, and the error
// says that the function has not returned.
func TestHealthyFunctionGoesOn(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	m := d.manager("a", short)
	err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
		stallRenewals(t, d, ctx) // returns once ctx is done
		// The function goes on, as one that ignores its context would.
		err := waitHealth(t, context.Background(), m.Healthy, false)
		if !errors.Is(err, leasepkg.ErrRenewalStalled) || !strings.Contains(err.Error(), "its function has not returned") {
			t.Errorf("Healthy of a function going on after its term: %v, want ErrRenewalStalled saying its function has not returned", err)
		}
		return nil
	})
	if !errors.Is(err, leasepkg.ErrLeaseLost) {
		t.Fatalf("Hold: %v, want ErrLeaseLost", err)
	}
	if err := m.Healthy(); err != nil {
		t.Fatalf("Healthy after Hold returned: %v, want nil", err)
	}
}
