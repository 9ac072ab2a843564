//leaseguard:lease

// Package sqlx sends its statements through github.com/jmoiron/sqlx, whose
// methods that scan into Go values (Get, Select, MustExec and their
// Context forms) are SQL calls as database/sql's are.
package sqlx

import (
	"context"

	"github.com/jmoiron/sqlx"
)

var db *sqlx.DB

const renewSQL = `UPDATE worker_leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
 WHERE name = $1 AND holder = $2 AND epoch = $4 AND expires_at > clock_timestamp()
 RETURNING epoch`

type lease struct{ Epoch int64 }

// ok: the renewal's RETURNING is scanned, so a lost lease is an error.
func renew(ctx context.Context, name, holder string, ttlMillis, epoch int64) (lease, error) { // want renew:"renews a lease"
	var l lease
	err := db.GetContext(ctx, &l, renewSQL, name, holder, ttlMillis, epoch)
	return l, err
}

func appendOrder(ctx context.Context, epoch int64, payload string) {
	db.MustExecContext(ctx, `INSERT INTO orders (epoch, payload) VALUES ($1, $2)`, epoch, payload) // want `INSERT into orders is not fenced`
}

func appendOrderTx(ctx context.Context, epoch int64, payload string) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tx.MustExec(`INSERT INTO orders (epoch, payload) VALUES ($1, $2)`, epoch, payload) // want `INSERT into orders is not fenced`
	return tx.Commit()
}

// A named query's :name parameters are not SQL that PostgreSQL parses:
// it is left unread, and so not reported as SQL that does not parse.
func appendNamed(ctx context.Context, o struct{ Epoch int64 }) error {
	_, err := db.NamedExecContext(ctx, `INSERT INTO audit (epoch) VALUES (:epoch)`, o)
	return err
}
