// Package sqlutil wraps SQL calls, outside any lease package.
package sqlutil

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Extend sets a lease's expiry to at.
func Extend(ctx context.Context, p *pgxpool.Pool, name string, at time.Time) error { // want Extend:"executes SQL with params \\[2 3\\]"
	_, err := p.Exec(ctx, `UPDATE worker_leases SET expires_at = $2 WHERE name = $1`, name, at)
	return err
}
