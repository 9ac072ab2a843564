//leaseguard:lease

// Package queue sends SQL in which no lease table shows: the fence rule
// checks no write here, and says so.
package queue

import (
	"context"
	"database/sql"
)

// Enqueue adds a job.
func Enqueue(ctx context.Context, db *sql.DB, body string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO jobs (body) VALUES ($1)`, body)
	return err
}
