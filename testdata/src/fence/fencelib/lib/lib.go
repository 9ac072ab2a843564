//leaseguard:lease

// Package lib fences transactions for its callers, as leasepkg's
// Manager.Fence and Manager.Tx do: the fact that it does reaches the
// packages that call it.
package lib

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var errLost = errors.New("lease lost")

// Lease is a term of the lease.
type Lease struct {
	Name, Holder string
	Epoch        int64
}

// Manager holds leases.
type Manager struct{ Pool *pgxpool.Pool }

const fenceSQL = `SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE`

// Fence fences tx: the writes after it in tx commit only while l holds.
func (m *Manager) Fence(ctx context.Context, tx pgx.Tx, l Lease) error { // want Fence:"fences the transaction it is given"
	var one int
	if err := tx.QueryRow(ctx, fenceSQL, l.Name, l.Holder, l.Epoch).Scan(&one); err != nil {
		return errLost
	}
	return nil
}

const fenceVerdictSQL = `SELECT EXISTS (SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR KEY SHARE)`

// FenceBatch fences tx as leasepkg does: in a batch that tx sends, with
// the verdict a column of the answer.
func (m *Manager) FenceBatch(ctx context.Context, tx pgx.Tx, l Lease) error { // want FenceBatch:"fences the transaction it is given"
	b := &pgx.Batch{}
	b.Queue(fenceVerdictSQL, l.Name, l.Holder, l.Epoch)
	return tx.SendBatch(ctx, b).Close()
}

// Tx runs fn in a transaction that Fence fenced.
func (m *Manager) Tx(ctx context.Context, l Lease, fn func(ctx context.Context, tx pgx.Tx) error) error { // want Tx:"fences the transaction it hands to its callback"
	tx, err := m.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := m.Fence(ctx, tx, l); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
