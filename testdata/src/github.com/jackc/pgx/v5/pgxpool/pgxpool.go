// Package pgxpool stands in for pgxpool, with the shapes the rules use.
package pgxpool

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pool stands in for pgxpool.Pool.
type Pool struct{}

// Exec executes sql.
func (p *Pool) Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, nil
}

// Query queries rows.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) { return nil, nil }

// QueryRow queries one row.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row { return nil }

// SendBatch sends a batch.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults { return nil }

// CopyFrom copies rows in.
func (p *Pool) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return 0, nil
}

// Begin begins a transaction.
func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error) { return nil, nil }
