package leasepkg_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestCampaignAfterSlowAttempt: an acquisition attempt that waits longer
// than the TTL for the pool's only connection must not leave the campaign's
// next term with a dead context. The deadline belongs to the term it was
// started for, and ends with the attempt that started it.
func TestCampaignAfterSlowAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	b := d.manager("b", nil)
	lb := d.acquire(b)

	cc := d.pool.Config().Copy()
	cc.MaxConns = 1
	one, err := pgxpool.NewWithConfig(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	hog, err := one.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lostBeforeAcquiring atomic.Int64
	a := d.managerOn(one, "a", func(c *leasepkg.Config) {
		short(c)
		c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
			if e.Kind == leasepkg.Lost && e.Lease.Epoch == 0 {
				lostBeforeAcquiring.Add(1)
			}
		})
	})
	done := make(chan error, 1)
	go func() {
		done <- a.Campaign(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			return orders.AppendOrder(ctx, a, term.Lease(), order(1))
		})
	}()
	// The first attempt waits for the only connection for several TTLs.
	time.Sleep(3 * a.Config().TTL)
	hog.Release()
	if err := b.Release(ctx, lb); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Campaign after an attempt slower than the TTL: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Campaign did not return")
	}
	if n := d.orders(); n != 1 {
		t.Fatalf("%d orders written by the term, want 1", n)
	}
	a.Close() // delivers the events queued for the observer
	if n := lostBeforeAcquiring.Load(); n != 0 {
		t.Fatalf("observer told of %d losses at epoch 0, of a lease never acquired", n)
	}
}
