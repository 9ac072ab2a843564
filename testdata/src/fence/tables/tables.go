//leaseguard:lease

// Package tables shares its SQL with the rest of an application; only the
// tables named by -fence.tables need a fence.
package tables

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func writes(ctx context.Context) {
	_, _ = pool.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x")       // want `INSERT into orders is not fenced`
	_, _ = pool.Exec(ctx, `INSERT INTO billing.invoices (total) VALUES ($1)`, 1) // want `INSERT into invoices is not fenced`
	_, _ = pool.Exec(ctx, `INSERT INTO page_views (path) VALUES ($1)`, "/")      // ok: not a guarded table
	_, _ = pool.Exec(ctx, `UPDATE sessions SET seen = now() WHERE id = $1`, 1)   // ok: not a guarded table
}
