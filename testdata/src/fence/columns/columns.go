//leaseguard:lease

// Package columns names its lease table and columns differently, and says
// so by setting.
package columns

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

func writes(ctx context.Context) {
	// ok: a complete fence in this package's names.
	done(pool.Exec(ctx, `INSERT INTO jobs (term) SELECT $3 WHERE EXISTS (SELECT 1 FROM leadership WHERE name = $1 AND owner = $2 AND term = $3 AND valid_until > clock_timestamp() FOR SHARE)`, "a", "h", 1))
	done(pool.Exec(ctx, `INSERT INTO jobs (term) SELECT $3 WHERE EXISTS (SELECT 1 FROM leadership WHERE name = $1 AND holder = $2 AND term = $3 AND valid_until > clock_timestamp() FOR SHARE)`, "a", "h", 1)) // want `fence does not test the holder \(owner = \$n\)`
}
