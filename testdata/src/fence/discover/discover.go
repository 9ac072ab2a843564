//leaseguard:lease

// Package discover names its lease table leader_leases and says so only
// through its renewal: the rule finds the table there.
package discover

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const renewSQL = `UPDATE leader_leases
   SET expires_at = clock_timestamp() + interval '15 seconds'
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

func renew(ctx context.Context) {
	done(pool.Exec(ctx, renewSQL, "a", "h", 1))
}

func writes(ctx context.Context) {
	// ok: fenced on the table the renewal updates.
	done(pool.Exec(ctx, `INSERT INTO orders (epoch) SELECT $3 WHERE EXISTS (SELECT 1 FROM leader_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)`, "a", "h", 1))
	// worker_leases is not this package's lease table: no fence at all.
	done(pool.Exec(ctx, `INSERT INTO orders (epoch) SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)`, "a", "h", 1)) // want `INSERT into orders is not fenced: no EXISTS or join on leader_leases`
}
