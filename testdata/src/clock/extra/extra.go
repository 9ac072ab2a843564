//leaseguard:lease

// Package extra reads a clock that only the clock.funcs setting names.
package extra

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Ticks is a clock of its own.
func Ticks() int64 { return 42 }

func write(ctx context.Context, p *pgxpool.Pool) {
	p.Exec(ctx, `UPDATE t SET expires_at = $1`, Ticks()) // want `extra.Ticks flows into an argument of Exec`
}
