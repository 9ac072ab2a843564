//leaseguard:lease

// Package plugin is a storage plugin whose statements run on the
// transaction its callers began, and which locks the lease row for them:
// a caller reads the shard's range_id under FOR SHARE, compares it in Go,
// and then writes through the plugin in the same transaction, so the
// plugin's writes are fenced by its callers. Its SQL goes through
// exported helpers, which the package's own methods call with constant
// text.
package plugin

import (
	"context"
	"database/sql"
)

type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
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

// ReadLockShard locks the shard row; the caller compares the range id.
func (d *DB) ReadLockShard(ctx context.Context, shard int) (rangeID int64, err error) {
	err = d.conn().QueryRowContext(ctx, `SELECT range_id FROM shards WHERE shard_id = $1 FOR SHARE`, shard).Scan(&rangeID)
	return rangeID, err
}

// DeleteExecution runs in the caller's fenced transaction.
func (d *DB) DeleteExecution(ctx context.Context, shard int, run string) error {
	_, err := d.ExecContext(ctx, `DELETE FROM executions WHERE shard_id = $1 AND run_id = $2`, shard, run)
	return err
}
