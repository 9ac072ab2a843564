//leaseguard:lease

// Package user writes orders stamped with the lease's epoch, fenced by
// another package's Fence and Tx: the rule takes the transactions they
// fenced for fenced.
package user

import (
	"context"

	"fence/fencelib/lib"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const insertOrder = `INSERT INTO orders (id, epoch) VALUES ($1, $2)`

// ok: fenced by lib's Fence before the write, in the same transaction.
func AppendFenced(ctx context.Context, m *lib.Manager, l lib.Lease, id string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := m.Fence(ctx, tx, l); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, insertOrder, id, l.Epoch); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ok: fenced by a batch that lib's FenceBatch sent on tx.
func AppendFencedBatch(ctx context.Context, m *lib.Manager, tx pgx.Tx, l lib.Lease, id string) error { // want AppendFencedBatch:"fences the transaction it is given"
	if err := m.FenceBatch(ctx, tx, l); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, insertOrder, id, l.Epoch)
	return err
}

// ok: the callback runs on the transaction that lib's Tx fenced.
func AppendInTx(ctx context.Context, m *lib.Manager, l lib.Lease, id string) error {
	return m.Tx(ctx, l, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insertOrder, id, l.Epoch)
		return err
	})
}

// The write comes before the fence: nothing fenced it.
func AppendThenFence(ctx context.Context, m *lib.Manager, l lib.Lease, id string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, insertOrder, id, l.Epoch); err != nil { // want `INSERT into orders is not fenced`
		return err
	}
	if err := m.Fence(ctx, tx, l); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// A write on the pool, outside any transaction that was fenced.
func AppendUnfenced(ctx context.Context, l lib.Lease, id string) error {
	_, err := pool.Exec(ctx, insertOrder, id, l.Epoch) // want `INSERT into orders is not fenced`
	return err
}
