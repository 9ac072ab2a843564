package leasepkg_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

const leaseName = "orders"

// db is one test's database: a pool on a fresh, migrated database with the
// lease table and the orders table that examples/orders guards, and
// helpers that act on it behind the lease package's back.
type db struct {
	t    testing.TB
	pool *pgxpool.Pool
}

func newDB(t testing.TB) *db {
	t.Helper()
	d := &db{t: t, pool: pgtest.Pool(t)}
	if err := d.manager("migrator", nil).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := orders.Migrate(context.Background(), d.pool); err != nil {
		t.Fatal(err)
	}
	return d
}

// manager returns a Manager for holder on the test's pool; edit, if not nil,
// changes the config first. TTLs are long unless edit shortens them, so that
// no lease expires on its own during a test.
func (d *db) manager(holder string, edit func(*leasepkg.Config)) *leasepkg.Manager {
	d.t.Helper()
	return d.managerOn(d.pool, holder, edit)
}

// managerOn is manager on another pool to the test's database.
func (d *db) managerOn(pool *pgxpool.Pool, holder string, edit func(*leasepkg.Config)) *leasepkg.Manager {
	d.t.Helper()
	cfg := leasepkg.DefaultConfig(leaseName)
	cfg.Holder = holder
	cfg.TTL = time.Minute
	cfg.RenewInterval = 20 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	m, err := leasepkg.New(pool, cfg)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(m.Close)
	return m
}

// acquire acquires the lease for m and fails the test if it cannot.
func (d *db) acquire(m *leasepkg.Manager) leasepkg.Lease {
	d.t.Helper()
	l, err := m.Acquire(context.Background())
	if err != nil {
		d.t.Fatal(err)
	}
	return l
}

// exec runs sql on the pool and fails the test on error.
func (d *db) exec(sql string, args ...any) {
	d.t.Helper()
	if _, err := d.pool.Exec(context.Background(), sql, args...); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
}

// expire makes the lease expired by the database's clock, as time passing
// would, without changing holder or epoch (a non-key update, so it does not
// wait for fenced writers).
func (d *db) expire() {
	d.t.Helper()
	d.exec(`UPDATE worker_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = $1`, leaseName)
}

// count returns the single integer that sql selects.
func (d *db) count(sql string, args ...any) int {
	d.t.Helper()
	var n int
	if err := d.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (d *db) orders() int { return d.count(`SELECT count(*) FROM orders`) }

// epoch returns the lease row's epoch.
func (d *db) epoch() int64 {
	d.t.Helper()
	var e int64
	if err := d.pool.QueryRow(context.Background(), `SELECT epoch FROM worker_leases WHERE name = $1`, leaseName).Scan(&e); err != nil {
		d.t.Fatal(err)
	}
	return e
}

// staleOrders counts orders that committed after the lease row moved past
// their epoch: the violations that the fence exists to prevent. It reads
// commit timestamps (the test cluster runs with track_commit_timestamp).
func (d *db) staleOrders() int {
	return d.count(`
SELECT count(*) FROM orders o JOIN worker_leases l ON l.name = o.lease_name
 WHERE o.epoch < l.epoch
   AND pg_xact_commit_timestamp(o.xmin) > pg_xact_commit_timestamp(l.xmin)`)
}

// fenceStatement is how the fence's statement starts, as pg_stat_activity
// shows it.
const fenceStatement = "SELECT current_setting('transaction_isolation'),"

// waitUntilNone waits until no backend runs a statement that starts with
// prefix, or fails the test after a deadline.
func (d *db) waitUntilNone(prefix string) {
	d.t.Helper()
	d.poll("no backend to run "+prefix, `SELECT count(*) = 0 FROM pg_stat_activity
 WHERE state = 'active' AND datname = current_database() AND query LIKE $1`, prefix+"%")
}

// waitForLockWait waits until a backend running a statement that starts
// with prefix waits for a lock, or fails the test after a deadline.
func (d *db) waitForLockWait(prefix string) {
	d.t.Helper()
	d.poll("a backend running "+prefix+" to wait for a lock", `SELECT count(*) > 0 FROM pg_stat_activity
 WHERE wait_event_type = 'Lock' AND datname = current_database() AND query LIKE $1`, prefix+"%")
}

// poll runs the boolean query sql every few milliseconds until it is true,
// or fails the test after ten seconds.
func (d *db) poll(what, sql string, args ...any) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var ok bool
		if err := d.pool.QueryRow(ctx, sql, args...).Scan(&ok); err != nil && ctx.Err() == nil {
			d.t.Fatalf("%s: %v", sql, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			d.t.Fatalf("gave up waiting for %s", what)
		case <-tick.C:
		}
	}
}

func order(i int) orders.Order {
	return orders.Order{Key: fmt.Sprintf("order-%d", i), Payload: "item"}
}
