//leaseguard:lease

// Package inferred names its lease table's columns as it likes, and says
// nothing of them but through its SQL: the takeover sets locked_by and
// counts fencing_token up, the renewal tests locked_by, the fenced write
// tests fencing_token. The rule reads the lease table's shape from that,
// without settings.
package inferred

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost the lock")
	}
}

// ok: the takeover takes a lapsed lock, from the database's clock.
func acquire(ctx context.Context) {
	done(pool.Exec(ctx, `UPDATE job_locks
   SET locked_by = $2, fencing_token = fencing_token + 1,
       lease_expires_at = clock_timestamp() + $3 * interval '1 second'
 WHERE job = $1 AND lease_expires_at < clock_timestamp()`, "j", "w", 15))
}

func renew(ctx context.Context) {
	done(pool.Exec(ctx, `UPDATE job_locks SET lease_expires_at = clock_timestamp() + $3 * interval '1 second' WHERE job = $1 AND locked_by = $2`, "j", "w", 15)) // want `renewal does not test lease_expires_at > clock_timestamp\(\)`
}

const noTokenSQL = `INSERT INTO results (job, fencing_token, output) SELECT $1, $3, $4
 WHERE EXISTS (SELECT 1 FROM job_locks WHERE job = $1 AND locked_by = $2 AND lease_expires_at > clock_timestamp() FOR SHARE)`

func write(ctx context.Context) {
	// ok: the fence tests holder, token and expiry under a row lock.
	done(pool.Exec(ctx, `INSERT INTO results (job, fencing_token, output) SELECT $1, $3, $4
 WHERE EXISTS (SELECT 1 FROM job_locks WHERE job = $1 AND locked_by = $2 AND fencing_token = $3 AND lease_expires_at > clock_timestamp() FOR SHARE)`, "j", "w", 1, "out"))
	done(pool.Exec(ctx, noTokenSQL, "j", "w", 1, "out"))                              // want `fence does not test the epoch \(fencing_token = \$n\)`
	done(pool.Exec(ctx, `UPDATE results SET output = $2 WHERE job = $1`, "j", "out")) // want `UPDATE of results is not fenced: no EXISTS or join on job_locks tests holder, epoch and expiry`
}

// ok: an audit table that nothing fences and that carries no token.
func audit(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO audit (job, note) VALUES ($1, $2)`, "j", "n"))
}

// ok: a write that reads the lease rows only for their expiry (the items
// of jobs whose lock is live) fences nothing, so the table it writes is
// not guarded, and its other writes need no fence.
func sweep(ctx context.Context) {
	done(pool.Exec(ctx, `DELETE FROM queue_items q WHERE EXISTS (SELECT 1 FROM job_locks l WHERE l.job = q.job AND l.lease_expires_at > clock_timestamp())`))
	done(pool.Exec(ctx, `INSERT INTO queue_items (job) VALUES ($1)`, "j"))
}
