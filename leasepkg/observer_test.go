package leasepkg_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestSlowObserver: an observer that blocks does not delay acquisitions or
// renewals; once it goes on, it gets every event, in order.
func TestSlowObserver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	gate := make(chan struct{})
	var mu sync.Mutex
	var kinds []leasepkg.EventKind
	m := d.manager("a", func(c *leasepkg.Config) {
		short(c)
		c.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
			<-gate
			mu.Lock()
			kinds = append(kinds, e.Kind)
			mu.Unlock()
		})
	})
	open := sync.OnceFunc(func() { close(gate) })
	defer open()
	ran := make(chan error, 1)
	go func() {
		ran <- m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			// Several TTLs with the observer blocked: only renewals that
			// do not wait for it keep the lease.
			time.Sleep(4 * m.Config().TTL)
			return orders.AppendOrder(ctx, m, term.Lease(), order(1))
		})
	}()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Hold with a blocked observer: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Hold with a blocked observer did not return: the observer holds up the lease")
	}
	open()    // let the observer go on
	m.Close() // delivers what is queued
	mu.Lock()
	defer mu.Unlock()
	if len(kinds) < 3 || kinds[0] != leasepkg.Acquired || kinds[len(kinds)-1] != leasepkg.Released {
		t.Fatalf("events %v, want acquired, renewals, released", kinds)
	}
	// A renewal may fail on a loaded machine and the next one succeed: the
	// term goes on (Hold returned nil after its fenced write), and the
	// observer hears both, in order.
	renewed := 0
	for _, k := range kinds[1 : len(kinds)-1] {
		switch k {
		case leasepkg.Renewed:
			renewed++
		case leasepkg.RenewFailed:
		default:
			t.Fatalf("events %v, want acquired, renewals (some maybe failed), released", kinds)
		}
	}
	if renewed == 0 {
		t.Fatalf("events %v: no renewal", kinds)
	}
}
