// Package notlease is not a lease package: its SQL is not read.
package notlease

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func writes(ctx context.Context) {
	_, _ = pool.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x")
	_, _ = pool.Exec(ctx, `DELETE FROM worker_leases`)
	_, _ = pool.Exec(ctx, `SELEC 1`)
}
