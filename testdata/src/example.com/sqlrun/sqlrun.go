// Package sqlrun runs the SQL it is given, outside any lease package.
package sqlrun

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Run executes query with args.
func Run(ctx context.Context, p *pgxpool.Pool, query string, args ...any) error {
	_, err := p.Exec(ctx, query, args...)
	return err
}
