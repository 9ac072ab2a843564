//leaseguard:lease

// Package nolock is the plugin without the locked read: nothing in it
// shows that its callers fence the transactions its writes run on.
package nolock

import (
	"context"
	"database/sql"
)

type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// DB runs on the pool, or on a transaction that a caller began.
type DB struct {
	pool *sql.DB
	tx   *sql.Tx
}

func (d *DB) conn() conn {
	if d.tx != nil {
		return d.tx
	}
	return d.pool
}

// ExecContext runs the statement it is given.
func (d *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.conn().ExecContext(ctx, query, args...)
}

// DeleteExecution writes the guarded table unfenced.
func (d *DB) DeleteExecution(ctx context.Context, shard int, run string) error {
	_, err := d.ExecContext(ctx, `DELETE FROM executions WHERE shard_id = $1 AND run_id = $2`, shard, run) // want `DELETE from executions is not fenced`
	return err
}
