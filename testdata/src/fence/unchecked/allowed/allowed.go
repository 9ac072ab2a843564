//leaseguard:lease

// Package allowed is unchecked too, and says why the note is not needed.
//
//leaseguard:allow fence -- the lease is the advisory lock of its caller
package allowed

import (
	"context"
	"database/sql"
)

func enqueue(ctx context.Context, db *sql.DB, body string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO jobs (body) VALUES ($1)`, body)
	return err
}
