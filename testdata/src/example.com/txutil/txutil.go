// Package txutil runs a function in a transaction, as goqite's
// internal/sql.InTx does.
package txutil

import (
	"context"
	"database/sql"
)

// InTx runs fn in a transaction of db, and commits when fn succeeds.
func InTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
