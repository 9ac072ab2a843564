//leaseguard:lease

// Package twotables keeps two leases of one shape, a workflow's and an
// activity's, each a row with its worker and locked_until, and names both
// tables by setting. A third table whose rows name a worker and a time
// (the workers' registry) is not a lease table: the setting says which
// are.
package twotables

import (
	"context"
	"database/sql"
	"errors"
)

var errLost = errors.New("lost the lock")

func checked(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errLost
	}
	return nil
}

// ok: the workflow lock's renewal tests the lapse and its rows affected.
func extendWorkflow(ctx context.Context, tx *sql.Tx, id, worker string) error { // want extendWorkflow:"renews a lease"
	return checked(tx.ExecContext(ctx, `UPDATE instances SET locked_until = clock_timestamp() + interval '1 minute' WHERE id = $1 AND worker = $2 AND locked_until > clock_timestamp()`, id, worker))
}

// The activity lock's renewal, in the second lease table: no lapse test,
// and its rows affected are discarded.
func extendActivity(ctx context.Context, tx *sql.Tx, id, worker string) error { // want extendActivity:"renews a lease"
	_, err := tx.ExecContext(ctx, `UPDATE activities SET locked_until = clock_timestamp() + interval '2 minutes' WHERE id = $1 AND worker = $2`, id, worker) // want `renewal does not test locked_until > clock_timestamp\(\)` `the result of this renewal is discarded`
	return err
}

// ok: the registry is not a lease table, though its rows name a worker
// and a time.
func register(ctx context.Context, tx *sql.Tx, worker string) error {
	_, err := tx.ExecContext(ctx, `UPDATE workers SET locked_until = clock_timestamp() + interval '1 minute' WHERE worker = $1`, worker)
	return err
}
