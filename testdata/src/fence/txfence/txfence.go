//leaseguard:lease

// Package txfence takes the fence once, as the transaction's first
// statement, and then writes plainly: under READ COMMITTED the lease row's
// lock holds until commit, and a takeover waits for it.
package txfence

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const fenceSQL = `SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()
   FOR SHARE`

// ok: the fence first, its row required, then the writes.
func write(ctx context.Context) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var one int
	if err := tx.QueryRow(ctx, fenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE stock SET n = n - 1 WHERE id = $1`, 7); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// A write before the fence is not fenced by it.
func writeFirst(ctx context.Context) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x"); err != nil { // want `INSERT into orders is not fenced`
		return err
	}
	var one int
	if err := tx.QueryRow(ctx, fenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ok: a helper that writes on the transaction it is given: the caller may
// have fenced it, as write does.
func insertOrder(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x")
	return err
}

// A fence without a row lock fences nothing that it holds to commit.
const weakFenceSQL = `SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`

func writeWeak(ctx context.Context) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var one int
	if err := tx.QueryRow(ctx, weakFenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM orders WHERE id = $1`, 7); err != nil { // want `fence reads worker_leases without a row lock`
		return err
	}
	return tx.Commit(ctx)
}

// ok: now() in a fence that is the transaction's first statement is the
// time the fence runs.
const nowFenceSQL = `SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now()
   FOR SHARE`

func writeNowFirst(ctx context.Context) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var one int
	if err := tx.QueryRow(ctx, nowFenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x"); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// After an earlier statement, now() is the transaction's start.
func writeNowLater(ctx context.Context) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1s'`); err != nil {
		return err
	}
	var one int
	if err := tx.QueryRow(ctx, nowFenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x"); err != nil { // want `fence tests expires_at against now\(\), the transaction's start time, after earlier statements`
		return err
	}
	return tx.Commit(ctx)
}
