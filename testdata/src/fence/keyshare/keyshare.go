//leaseguard:lease

// Package keyshare embeds a schema whose unique key includes the epoch, so
// FOR KEY SHARE conflicts with a takeover's change of it.
package keyshare

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schemaSQL string

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

func migrate(ctx context.Context) {
	_, _ = pool.Exec(ctx, schemaSQL)
}

// ok: FOR KEY SHARE, and the schema makes the epoch a key column.
const appendSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR KEY SHARE)`

func write(ctx context.Context) {
	done(pool.Exec(ctx, appendSQL, "a", "h", 1, "x"))
}

// The fix for a fence without a lock offers the lighter lock here.
const unlockedSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp())`

func unlocked(ctx context.Context) {
	done(pool.Exec(ctx, unlockedSQL, "a", "h", 1, "x")) // want `fence reads worker_leases without a row lock: a takeover can commit between the check and this write's commit; add FOR KEY SHARE`
}
