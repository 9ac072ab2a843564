// Package notlease reads the clock into SQL but carries no directive.
package notlease

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func write(ctx context.Context, p *pgxpool.Pool) {
	p.Exec(ctx, `UPDATE t SET at = $1`, time.Now()) // ok: not a lease package
}
