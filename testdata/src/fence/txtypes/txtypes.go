//leaseguard:lease

// Package txtypes runs its statements through types of its own. Whether
// they share a transaction is read from what a type does (it commits and
// rolls back), not from its name; and the verdict of a fenced write may be
// read through an interface of the package's own.
package txtypes

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	db   *sql.DB
	pool *pgxpool.Pool
)

var errStale = errors.New("stale fence; drop the write")

// Tx is named like a transaction but only executes SQL: a pool satisfies
// it as well, so its statements may each be a transaction of their own.
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Txn commits and rolls back: a transaction, whatever it wraps.
type Txn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	Commit() error
	Rollback() error
}

// loggedTx wraps the transaction that begin starts.
type loggedTx struct{ *sql.Tx }

func executor() Tx { return db }

func begin(ctx context.Context) (Txn, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return loggedTx{tx}, nil
}

func verdict(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return errStale
	}
	return nil
}

const appendSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR SHARE)`

const nowAppendSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > now()
                FOR SHARE)`

// ok: through an executor that may be a pool, each statement may be a
// transaction of its own, and now() the time the write runs.
func throughExecutor(ctx context.Context) error {
	q := executor()
	if _, err := q.ExecContext(ctx, `SET lock_timeout = '1s'`); err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, nowAppendSQL, "a", "h", 1, "x")
	if err != nil {
		return err
	}
	return verdict(res)
}

// In a transaction that a type of the package wraps, now() after an
// earlier statement is the transaction's start.
func throughTxn(ctx context.Context) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '1s'`); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, nowAppendSQL, "a", "h", 1, "x") // want `fence tests expires_at against now\(\), the transaction's start time, after earlier statements`
	if err != nil {
		return err
	}
	if err := verdict(res); err != nil {
		return err
	}
	return tx.Commit()
}

// The wrapper's Commit ends the transaction before the verdict is read.
func commitFirst(ctx context.Context, tx Txn) error {
	res, err := tx.ExecContext(ctx, appendSQL, "a", "h", 1, "x") // want `the transaction commits before the rows affected by this fenced write are compared`
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return verdict(res)
}

const fenceSQL = `SELECT 1 FROM worker_leases
 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()
   FOR SHARE`

// ok: the fence, first in the wrapper's transaction, fences the writes
// after it.
func fencedTxn(ctx context.Context) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, fenceSQL, "a", "h", 1).Scan(&one); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x"); err != nil {
		return err
	}
	return tx.Commit()
}

// counted is the part of a command tag that counted reads.
type counted interface{ RowsAffected() int64 }

func check(c counted) error {
	if c.RowsAffected() != 1 {
		return errStale
	}
	return nil
}

// ok: the verdict read through an interface of the package's own.
func throughInterface(ctx context.Context) error {
	tag, err := pool.Exec(ctx, appendSQL, "a", "h", 1, "x")
	if err != nil {
		return err
	}
	return check(tag)
}
