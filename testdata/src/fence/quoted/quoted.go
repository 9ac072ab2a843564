//leaseguard:lease

// Package quoted has a lease table whose name is quoted, and another table
// whose name differs only in case: PostgreSQL's rules say they differ.
package quoted

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost lease")
	}
}

func renew(ctx context.Context, at any) {
	done(pool.Exec(ctx, `UPDATE "Lease" SET expires_at = $2 WHERE holder = $1 AND expires_at > clock_timestamp()`, "h", at)) // want `UPDATE of "Lease" sets expires_at from \$2`
}

// ok: lease is not "Lease".
func other(ctx context.Context, at any) {
	done(pool.Exec(ctx, `UPDATE lease SET expires_at = $2 WHERE holder = $1`, "h", at))
}
