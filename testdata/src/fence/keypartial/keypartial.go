//leaseguard:lease

// Package keypartial has a unique index on the epoch that is partial: not a
// key, so a takeover does not wait for FOR KEY SHARE.
package keypartial

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const indexSQL = `CREATE UNIQUE INDEX IF NOT EXISTS worker_leases_epoch ON worker_leases (name, epoch) WHERE holder <> ''`

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

func write(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (epoch) SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR KEY SHARE)`, "a", "h", 1)) // want `fence takes FOR KEY SHARE`
}
