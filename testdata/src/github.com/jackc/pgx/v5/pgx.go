// Package pgx stands in for pgx v5, with the shapes the rules use.
package pgx

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Row stands in for pgx.Row.
type Row interface{ Scan(dest ...any) error }

// Rows stands in for pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Close()
}

// NamedArgs stands in for pgx.NamedArgs.
type NamedArgs map[string]any

// Identifier stands in for pgx.Identifier.
type Identifier []string

// CopyFromSource stands in for pgx.CopyFromSource.
type CopyFromSource interface{ Next() bool }

type rows [][]any

func (r rows) Next() bool { return len(r) > 0 }

// CopyFromRows stands in for pgx.CopyFromRows.
func CopyFromRows(r [][]any) CopyFromSource { return rows(r) }

// BatchResults stands in for pgx.BatchResults.
type BatchResults interface{ Close() error }

// Batch stands in for pgx.Batch.
type Batch struct{ n int }

// QueuedQuery stands in for pgx.QueuedQuery.
type QueuedQuery struct{}

// Queue queues a query.
func (b *Batch) Queue(query string, arguments ...any) *QueuedQuery { b.n++; return &QueuedQuery{} }

// Tx stands in for pgx.Tx.
type Tx interface {
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	SendBatch(ctx context.Context, b *Batch) BatchResults
	CopyFrom(ctx context.Context, table Identifier, cols []string, src CopyFromSource) (int64, error)
	Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error)
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Conn stands in for pgx.Conn.
type Conn struct{}

// Exec executes sql.
func (c *Conn) Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, nil
}

// QueryRow queries one row.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) Row { return nil }

// Prepare prepares sql under name: Exec, Query and QueryRow given the name
// run it.
func (c *Conn) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return &pgconn.StatementDescription{Name: name, SQL: sql}, nil
}

// Begin begins a transaction.
func (c *Conn) Begin(ctx context.Context) (Tx, error) { return nil, nil }
