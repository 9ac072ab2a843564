package leasepkg_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// short is a config with a short TTL, for tests that wait for Hold's timers.
func short(c *leasepkg.Config) {
	c.TTL = 600 * time.Millisecond
	c.RenewInterval = 100 * time.Millisecond
	c.LockTimeout = 100 * time.Millisecond
}

// waitDone fails the test unless ctx is done within limit.
func waitDone(t *testing.T, ctx context.Context, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(limit):
		t.Fatalf("%s: context not cancelled within %v", what, limit)
	}
}

func TestHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("cancels the context when the row is stolen", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		var lost atomic.Int64
		m := d.manager("a", func(c *leasepkg.Config) {
			short(c)
			c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
				if e.Kind == leasepkg.Lost {
					lost.Add(1)
				}
			})
		})
		err := m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			if err := orders.AppendOrder(ctx, m, term.Lease(), order(1)); err != nil {
				return err
			}
			d.exec(`UPDATE worker_leases SET holder = 'thief', epoch = epoch + 1`)
			waitDone(t, ctx, 5*time.Second, "stolen lease")
			if !errors.Is(context.Cause(ctx), leasepkg.ErrLeaseLost) {
				t.Errorf("cause %v, want ErrLeaseLost", context.Cause(ctx))
			}
			if err := orders.AppendOrder(context.Background(), m, term.Lease(), order(2)); !errors.Is(err, leasepkg.ErrStaleFence) {
				t.Errorf("write after the theft: %v, want ErrStaleFence", err)
			}
			return ctx.Err()
		})
		if !errors.Is(err, leasepkg.ErrLeaseLost) {
			t.Fatalf("Hold: %v, want ErrLeaseLost", err)
		}
		m.Close() // delivers the events queued for the observer
		if lost.Load() != 1 {
			t.Fatalf("observer saw %d losses, want 1", lost.Load())
		}
		if holder := d.count(`SELECT count(*) FROM worker_leases WHERE holder = 'thief'`); holder != 1 {
			t.Fatal("Hold released a lease it had lost")
		}
	})

	t.Run("cancels the context when no renewal is confirmed within the ttl", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", short)
		err := m.Hold(ctx, func(ctx context.Context, _ *leasepkg.Term) error {
			// Another session locks the lease row, so renewals hang until
			// their deadline: the database is reachable but confirms nothing.
			tx, err := d.pool.Begin(context.Background())
			if err != nil {
				return err
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(context.Background(), `SELECT 1 FROM worker_leases FOR UPDATE`); err != nil {
				return err
			}
			waitDone(t, ctx, 5*time.Second, "unconfirmed renewals")
			return nil
		})
		if !errors.Is(err, leasepkg.ErrLeaseLost) {
			t.Fatalf("Hold: %v, want ErrLeaseLost", err)
		}
	})

	t.Run("releases on a clean return", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", nil)
		var held leasepkg.Lease
		err := m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			held = term.Lease()
			return orders.AppendOrders(ctx, m, term.Lease(), []orders.Order{order(1), order(2)})
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := d.count(`SELECT count(*) FROM worker_leases WHERE expires_at <= clock_timestamp()`); n != 1 {
			t.Fatal("lease not expired after Hold returned")
		}
		if n := d.orders(); n != 2 {
			t.Fatalf("%d orders, want 2", n)
		}
		if err := orders.AppendOrder(ctx, m, held, order(3)); !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Fatalf("write after release: %v, want ErrStaleFence", err)
		}
	})

	t.Run("releases when the caller's context is cancelled", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		m := d.manager("a", short)
		cctx, cancel := context.WithCancel(ctx)
		err := m.Hold(cctx, func(ctx context.Context, _ *leasepkg.Term) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		})
		if !errors.Is(err, context.Canceled) || errors.Is(err, leasepkg.ErrLeaseLost) {
			t.Fatalf("Hold: %v, want context.Canceled", err)
		}
		if n := d.count(`SELECT count(*) FROM worker_leases WHERE expires_at <= clock_timestamp()`); n != 1 {
			t.Fatal("lease not released after the caller cancelled")
		}
	})

	t.Run("keeps the lease across renewals", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		var renewed atomic.Int64
		m := d.manager("a", func(c *leasepkg.Config) {
			short(c)
			c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
				if e.Kind == leasepkg.Renewed {
					renewed.Add(1)
				}
			})
		})
		err := m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			// Write until several TTLs' worth of renewals have passed.
			for i := 0; renewed.Load() < 15; i++ {
				if err := orders.AppendOrder(ctx, m, term.Lease(), order(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Hold over %d renewals: %v", renewed.Load(), err)
		}
	})

	t.Run("a held lease is not acquired", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		if _, err := d.manager("a", nil).Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		ran := false
		err := d.manager("b", nil).Hold(ctx, func(context.Context, *leasepkg.Term) error { ran = true; return nil })
		if !errors.Is(err, leasepkg.ErrLeaseHeld) || ran {
			t.Fatalf("Hold of a held lease: %v (fn ran: %v), want ErrLeaseHeld", err, ran)
		}
	})
}
