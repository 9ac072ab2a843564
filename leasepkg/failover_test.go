package leasepkg_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestPartitionWithOpenTransaction: the holder's fenced transaction is
// open, holding the lease row's lock, when its network partitions. The
// server would keep that lock until TCP gave up on the connection (hours);
// the fence's idle-in-transaction timeout ends the session, or a takeover
// with TerminateBlockers ends it as soon as the lease has expired. Until
// then a takeover fails with ErrTakeoverBlocked, not ErrLeaseHeld.
func TestPartitionWithOpenTransaction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		terminate bool
		idle      time.Duration
		wantCodes []string // what the old holder may hear when the partition heals
	}{
		// On PostgreSQL 17 and later the fence also sets transaction_timeout
		// to the idle timeout; armed a moment before the idle timer (which
		// starts when the fence's result has been sent), it usually ends the
		// session first (25P04).
		{"the idle timeout ends the holder's session", false, 1500 * time.Millisecond, []string{"25P03", "25P04"}},
		{"the takeover ends the holder's idle session", true, 1999 * time.Millisecond, []string{"57P01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d := newDB(t)
			a, poolA, proxy := d.managerBehindProxy("a", func(c *leasepkg.Config) {
				c.TTL, c.RenewInterval, c.IdleInTxTimeout = 2*time.Second, 500*time.Millisecond, tc.idle
			})
			b := d.manager("b", func(c *leasepkg.Config) {
				c.TTL, c.RenewInterval, c.LockTimeout = 2*time.Second, 500*time.Millisecond, 200*time.Millisecond
				c.TerminateBlockers = tc.terminate
			})
			la := d.acquire(a)
			// The lease has 300 ms left when the holder fences and is cut
			// off: the idle timeout, counted from the fence, outlasts it.
			d.exec(`UPDATE worker_leases SET expires_at = clock_timestamp() + interval '300 milliseconds'`)
			tx, err := poolA.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := orders.AppendOrderTx(ctx, a, tx, la, order(1)); err != nil {
				t.Fatal(err)
			}
			heal := proxy.Partition()
			defer func() {
				heal()
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_ = tx.Rollback(rctx)
			}()
			d.poll("the lease to expire", `SELECT expires_at <= clock_timestamp() FROM worker_leases`)

			// Contend as a campaign would, every 100 ms, for at most 20 s.
			expired := time.Now()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			var blocked int
			var lb leasepkg.Lease
			for {
				if lb, err = b.Acquire(cctx); err == nil {
					break
				}
				if !errors.Is(err, leasepkg.ErrTakeoverBlocked) || errors.Is(err, leasepkg.ErrLeaseHeld) {
					t.Fatalf("takeover of an expired lease: %v, want ErrTakeoverBlocked", err)
				}
				blocked++
				select {
				case <-cctx.Done():
					t.Fatalf("no takeover 20 s after expiry: %v", err)
				case <-tick.C:
				}
			}
			t.Logf("takeover %v after expiry, %d attempts blocked", time.Since(expired).Round(time.Millisecond), blocked)
			if !tc.terminate && blocked == 0 {
				t.Error("no attempt was blocked before the idle timeout ended the holder's session")
			}
			if lb.Epoch != la.Epoch+1 {
				t.Fatalf("took over at epoch %d, want %d", lb.Epoch, la.Epoch+1)
			}

			heal()
			err = tx.Commit(ctx)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || !slices.Contains(tc.wantCodes, pgErr.Code) {
				t.Fatalf("old holder's commit after the partition: %v, want SQLSTATE %s", err, strings.Join(tc.wantCodes, " or "))
			}
			if n := d.orders(); n != 0 {
				t.Fatalf("%d orders from the partitioned holder's transaction", n)
			}
		})
	}
}

// managerBehindProxy is d.manager on a pool of its own that reaches the
// database through a faults.Proxy, so that the test can cut it off.
func (d *db) managerBehindProxy(holder string, edit func(*leasepkg.Config)) (*leasepkg.Manager, *pgxpool.Pool, *faults.Proxy) {
	d.t.Helper()
	cc := d.pool.Config().Copy()
	proxy, err := faults.NewProxy(net.JoinHostPort(cc.ConnConfig.Host, strconv.Itoa(int(cc.ConnConfig.Port))))
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(proxy.Close)
	host, port, _ := net.SplitHostPort(proxy.Addr())
	p, _ := strconv.Atoi(port)
	cc.ConnConfig.Host, cc.ConnConfig.Port = host, uint16(p)
	cc.ConnConfig.ConnectTimeout = 2 * time.Second
	pool, err := pgxpool.NewWithConfig(context.Background(), cc)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(pool.Close)
	return d.managerOn(pool, holder, edit), pool, proxy
}
