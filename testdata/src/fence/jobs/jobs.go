//leaseguard:lease

// Package jobs is a job queue whose rows are leases too: a worker holds its
// job until it expires, and the attempt counts up at each fetch.
package jobs

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost the job")
	}
}

const fetchSQL = `UPDATE jobs SET holder = $1, epoch = epoch + 1, expires_at = clock_timestamp() + interval '1 hour'
 WHERE id = (SELECT id FROM jobs WHERE holder IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED)`

func fetch(ctx context.Context) {
	done(pool.Exec(ctx, fetchSQL, "h"))
}

// ok: a job's row, keyed by a serial id, never comes back once deleted: no
// token can be used again.
func finish(ctx context.Context) {
	_, _ = pool.Exec(ctx, `DELETE FROM jobs WHERE id = $1`, 7)
}
