//leaseguard:lease

// Package rows has fenced writes whose verdict, the rows they affected, is
// never read, or read only after the transaction commits.
package rows

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

var errStale = errors.New("stale fence; drop the write")

const appendSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR SHARE)`

func discarded(ctx context.Context) error {
	_, err := pool.Exec(ctx, appendSQL, "a", "h", 1, "x") // want `the result of this fenced write is discarded: a fence that refuses the write affects no rows and returns no error; compare RowsAffected before commit`
	return err
}

func neverCompared(ctx context.Context) error {
	tag, err := pool.Exec(ctx, appendSQL, "a", "h", 1, "x") // want `the rows affected by this fenced write are never compared`
	println(tag.String())
	return err
}

func commitFirst(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, appendSQL, "a", "h", 1, "x") // want `the transaction commits before the rows affected by this fenced write are compared: a refused write commits with the rest`
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return errStale
	}
	return nil
}

func sqlDiscarded(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, appendSQL, "a", "h", 1, "x") // want `the result of this fenced write is discarded`
	return err
}

// ok: compared before commit.
func compared(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, appendSQL, "a", "h", 1, "x")
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return errStale
	}
	return tx.Commit(ctx)
}

// ok: a switch on the count.
func switched(ctx context.Context) error {
	tag, err := pool.Exec(ctx, appendSQL, "a", "h", 1, "x")
	if err != nil {
		return err
	}
	switch tag.RowsAffected() {
	case 1:
		return nil
	default:
		return errStale
	}
}

// ok: handed to a helper of this package that compares it.
func handedOn(ctx context.Context, tx *sql.Tx) error {
	res, err := tx.ExecContext(ctx, appendSQL, "a", "h", 1, "x")
	if err != nil {
		return err
	}
	if err := verdict(res); err != nil {
		return err
	}
	return tx.Commit()
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

// ok: the caller decides.
func returned(ctx context.Context) (pgconn.CommandTag, error) {
	return pool.Exec(ctx, appendSQL, "a", "h", 1, "x")
}

// A helper that does not compare is no check.
func logOnly(tag pgconn.CommandTag) { println(tag.String()) }

func handedToNonChecker(ctx context.Context) error {
	tag, err := pool.Exec(ctx, appendSQL, "a", "h", 1, "x") // want `the rows affected by this fenced write are never compared`
	logOnly(tag)
	return err
}

// ok: not a fenced write: nothing to compare.
func unfencedRead(ctx context.Context) error {
	_, err := pool.Exec(ctx, `SELECT pg_advisory_xact_lock(1)`)
	return err
}
