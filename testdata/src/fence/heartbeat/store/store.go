//leaseguard:lease

// Package store keeps lock rows, as goose's lock store does: its
// UpdateLease renews the holder's lease and returns the failure as an
// error, and the interface it implements carries that fact to callers in
// other packages.
package store

import (
	"context"
	"database/sql"
	"errors"

	"example.com/txutil"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotHeld is returned when the lock is not held by the caller.
var ErrNotHeld = errors.New("lock not held")

// LockStore keeps lock rows.
type LockStore interface {
	UpdateLease(ctx context.Context, id int64, holder string) error // want UpdateLease:"renews a lease"
	Release(ctx context.Context, id int64, holder string) error
}

// Postgres is a LockStore on PostgreSQL.
type Postgres struct{ Pool *pgxpool.Pool }

var _ LockStore = (*Postgres)(nil)

const updateLease = `UPDATE worker_leases SET expires_at = clock_timestamp() + interval '30 seconds'
 WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()`

// UpdateLease renews the lease.
func (p *Postgres) UpdateLease(ctx context.Context, id int64, holder string) error { // want UpdateLease:"renews a lease"
	tag, err := p.Pool.Exec(ctx, updateLease, id, holder)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return ErrNotHeld
	}
	return nil
}

// Release ends the lease: no renewal.
func (p *Postgres) Release(ctx context.Context, id int64, holder string) error {
	_, err := p.Pool.Exec(ctx, `UPDATE worker_leases SET holder = NULL, expires_at = NULL WHERE name = $1 AND holder = $2`, id, holder)
	return err
}

// Queue extends a message's lease, as goqite's does: ExtendTx sends the
// extension (no holder column: only the holder extends), Extend runs it in
// a transaction through a helper of another package.
type Queue struct{ DB *sql.DB }

// Extend extends the message's lease.
func (q *Queue) Extend(ctx context.Context, id int64) error { // want Extend:"renews a lease"
	return txutil.InTx(ctx, q.DB, func(tx *sql.Tx) error {
		return q.ExtendTx(ctx, tx, id)
	})
}

// ExtendTx extends the message's lease in tx.
func (q *Queue) ExtendTx(ctx context.Context, tx *sql.Tx, id int64) error { // want ExtendTx:"renews a lease"
	_, err := tx.ExecContext(ctx, `UPDATE worker_leases SET expires_at = clock_timestamp() + interval '30 seconds' WHERE name = $1`, id) // want `the result of this renewal is discarded`
	return err
}
