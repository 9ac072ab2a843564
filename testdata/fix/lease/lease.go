//leaseguard:lease

// Package lease writes orders under fences that take no row lock, which
// leaseguard -fix adds (lease.go.golden is the file after it).
package lease

import (
	"context"
	"database/sql"
	"errors"
)

const writeSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp())`

// Write writes an order.
func Write(ctx context.Context, db *sql.DB, name, holder string, epoch int64, payload string) error {
	res, err := db.ExecContext(ctx, writeSQL, name, holder, epoch, payload)
	return checked(res, err)
}

// Delete deletes an order.
func Delete(ctx context.Context, db *sql.DB, name, holder string, epoch, id int64) error {
	res, err := db.ExecContext(ctx, `DELETE FROM orders WHERE id = $4 AND EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp())`, name, holder, epoch, id)
	return checked(res, err)
}

func checked(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.New("stale fence; drop the write")
	}
	return nil
}
