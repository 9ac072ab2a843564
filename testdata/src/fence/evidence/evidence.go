//leaseguard:lease

// Package evidence shares its package with the program's other SQL: only
// the tables that the package's own SQL shows to need a fence are checked.
package evidence

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

// ok: a fenced write to orders, which makes orders a guarded table.
func fenced(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (payload) SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $4 AND expires_at > clock_timestamp() FOR SHARE)`, "a", "h", "x", 1))
}

// The same table written without the fence: a strong finding.
func unfenced(ctx context.Context) {
	done(pool.Exec(ctx, `UPDATE orders SET payload = $1 WHERE id = $2`, "x", 7)) // want `UPDATE of orders is not fenced: no EXISTS or join on worker_leases tests holder, epoch and expiry`
}

// A write that carries the fencing token and no fence that tests it.
func tokenOnly(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO ledger (epoch, amount) VALUES ($1, $2)`, 1, 10)) // want `INSERT into ledger is not fenced`
}

// ok: queues, migrations and history share the package: without evidence
// that they need a fence, nothing is said of them.
func other(ctx context.Context) {
	_, _ = pool.Exec(ctx, `INSERT INTO jobs (kind) VALUES ($1)`, "x")
	_, _ = pool.Exec(ctx, `DELETE FROM job_history WHERE finished_at < now() - interval '7 days'`)
	_, _ = pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS migrations (version bigint PRIMARY KEY)`)
	// ok: MySQL's SQL in a package that also speaks PostgreSQL (a
	// migration tool's other store): no note.
	_, _ = pool.Exec(ctx, "SELECT * FROM jobs WHERE id = ?", 1)
}

// ok: a backfill that reads the lease table tests nothing of the lease: it
// is no fence, so it makes its table no guarded one, and its rows affected
// need no check.
func backfill(ctx context.Context) {
	_, _ = pool.Exec(ctx, `WITH ranked AS (SELECT name, row_number() OVER (ORDER BY name) AS rn FROM worker_leases)
UPDATE lease_stats AS t SET rank = r.rn FROM ranked AS r WHERE r.name = t.name`)
	_, _ = pool.Exec(ctx, `UPDATE lease_stats SET rank = 0 WHERE name = $1`, "a")
}
