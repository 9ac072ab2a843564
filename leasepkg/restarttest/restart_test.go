// Package restarttest restarts PostgreSQL under a holder. It is a test
// binary of its own, so that the restart cuts no other test's connections.
package restarttest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRestartMidHold restarts the server (pg_ctl restart -m fast, which cuts
// every connection) while a holder writes. The holder must come out clean:
// either it keeps the lease and its writes resume under the same epoch, or
// it loses the lease and Hold says so. No acknowledged write is lost.
func TestRestartMidHold(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	pool, err := pgxpool.New(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cfg := leasepkg.DefaultConfig("orders")
	cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = 4*time.Second, 500*time.Millisecond, time.Second
	m, err := leasepkg.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := orders.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}

	acked, unknown := 0, 0
	var epochs []int64
	holdErr := m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
		write := func(i int) error {
			err := orders.AppendOrder(ctx, m, term.Lease(), orders.Order{Key: fmt.Sprint(i), Payload: "x"})
			switch {
			case err == nil:
				acked++
				epochs = append(epochs, term.Lease().Epoch)
			case errors.Is(err, leasepkg.ErrOutcomeUnknown):
				unknown++
			}
			return err
		}
		if err := write(0); err != nil {
			return err
		}
		if err := srv.Restart(); err != nil {
			return err
		}
		// Write until a write lands after the restart, or the lease is lost.
		for i := 1; ; i++ {
			err := write(i)
			switch {
			case err == nil:
				return nil
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, leasepkg.ErrStaleFence):
				return err
			}
			select { // a connection error: the pool reconnects on the next try
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	switch {
	case holdErr == nil:
		t.Logf("kept the lease across the restart; %d writes acknowledged", acked)
		if epochs[0] != epochs[len(epochs)-1] {
			t.Fatalf("epoch changed under one term: %v", epochs)
		}
	case errors.Is(holdErr, leasepkg.ErrLeaseLost):
		t.Logf("lost the lease cleanly across the restart: %v", holdErr)
	default:
		t.Fatalf("Hold across a restart: %v", holdErr)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < acked || n > acked+unknown {
		t.Fatalf("%d orders in the table: %d acknowledged, %d of unknown outcome", n, acked, unknown)
	}
}
