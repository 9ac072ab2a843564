//leaseguard:lease

// Package nolease has a table whose statements show an expiry and
// nothing else of a lease: -lease.explain says so, and how to name it.
package nolease // want `2 SQL calls read, 0 not` `no guarded table` `the lease table worker_leases \(by the column names holder, epoch, expires_at\)`

import (
	"context"
	"database/sql"
	"time"
)

func beat(ctx context.Context, db *sql.DB, id int64, now time.Time) error {
	_, err := db.ExecContext(ctx, `UPDATE workers SET seen_at = $1 WHERE id = $2`, now, id) // want `the table workers is not taken for a lease table: its statements show expiry .seen_at., but no holder, no epoch, no takeover, no renewal; name it with -fence.table if it holds leases`
	return err
}

func stale(ctx context.Context, db *sql.DB, before time.Time) (*sql.Rows, error) {
	return db.QueryContext(ctx, `SELECT id FROM workers WHERE seen_at < $1`, before)
}
