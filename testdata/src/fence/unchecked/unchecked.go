//leaseguard:lease

// Package unchecked sends SQL, but none of it shows a lease table, and no
// setting names one: the rule checked no write, and says so once.
package unchecked // want `fence checked no write here: no lease table found \(name it with -fence.table\)`

import (
	"context"
	"database/sql"
)

func enqueue(ctx context.Context, db *sql.DB, body string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO jobs (body) VALUES ($1)`, body)
	return err
}
