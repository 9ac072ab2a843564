//leaseguard:lease

// Package writes has writes to a guarded table whose fence is missing or
// incomplete.
package writes

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// done checks a fenced write's verdict.
func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

func unfenced(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (epoch, payload) VALUES ($1, $2)`, 1, "x")) // want `INSERT into orders is not fenced: no EXISTS or join on worker_leases tests holder, epoch and expiry, so a stale holder's write lands`
}

func unfencedUpdate(ctx context.Context) {
	done(pool.Exec(ctx, `UPDATE orders SET payload = $2 WHERE id = $1`, 1, "x")) // want `UPDATE of orders is not fenced`
}

func unfencedDelete(ctx context.Context) {
	done(pool.Exec(ctx, `DELETE FROM orders WHERE id = $1`, 1)) // want `DELETE from orders is not fenced`
}

const mergeSQL = `MERGE INTO orders o USING (SELECT $1::bigint AS id) s ON o.id = s.id
WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)`

func unfencedMerge(ctx context.Context) {
	done(pool.Exec(ctx, mergeSQL, 1)) // want `MERGE into orders is not fenced`
}

// A subquery on the lease table that decides no row is no fence: the write
// happens whatever it returns.
const scalarSQL = `INSERT INTO orders (epoch, payload)
VALUES ((SELECT epoch FROM worker_leases
          WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()
          FOR SHARE), $4)`

func scalarSubquery(ctx context.Context) {
	done(pool.Exec(ctx, scalarSQL, "a", "h", 1, "x")) // want `INSERT into orders is not fenced`
}

// NOT EXISTS is the opposite of a fence.
const notExistsSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE NOT EXISTS (SELECT 1 FROM worker_leases
                    WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()
                    FOR SHARE)`

func notExists(ctx context.Context) {
	done(pool.Exec(ctx, notExistsSQL, "a", "h", 1, "x")) // want `INSERT into orders is not fenced`
}

const noEpochSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()
                FOR SHARE)`

func noEpoch(ctx context.Context) {
	done(pool.Exec(ctx, noEpochSQL, "a", "h", 1, "x")) // want `fence does not test the epoch \(epoch = \$n\): a stale write passes it`
}

const noHolderNoExpirySQL = `INSERT INTO orders (epoch, payload) SELECT $2, $3
 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND epoch = $2 FOR SHARE)`

func noHolderNoExpiry(ctx context.Context) {
	done(pool.Exec(ctx, noHolderNoExpirySQL, "a", 1, "x")) // want `fence does not test the holder \(holder = \$n\) or expiry against the database clock \(expires_at > clock_timestamp\(\)\): a stale write passes it`
}

// An epoch compared with anything but a parameter does not pin the term.
const epochRangeSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch >= $3 AND expires_at > clock_timestamp()
                FOR SHARE)`

func epochNotParam(ctx context.Context) {
	done(pool.Exec(ctx, epochRangeSQL, "a", "h", 1, "x")) // want `fence does not test the epoch`
}

// A test under OR is no test.
const orSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND (holder = $2 OR holder IS NULL) AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR SHARE)`

func orWeakens(ctx context.Context) {
	done(pool.Exec(ctx, orSQL, "a", "h", 1, "x")) // want `fence does not test the holder`
}

const expiryParamSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > $5
                FOR SHARE)`

func expiryFromProcess(ctx context.Context, now any) {
	done(pool.Exec(ctx, expiryParamSQL, "a", "h", 1, "x", now)) // want `fence tests expires_at against \$5, a time the process chose: compare it with clock_timestamp\(\)`
}

const nowSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now()
                FOR SHARE)`

// now() is the transaction's start: after an earlier statement in the same
// transaction, an expired lease still passes expires_at > now().
func nowAfterEarlierStatement(ctx context.Context, tx pgx.Tx) {
	done(tx.Exec(ctx, `SELECT set_config('lock_timeout', '1s', true)`))
	done(tx.Exec(ctx, nowSQL, "a", "h", 1, "x")) // want `fence tests expires_at against now\(\), the transaction's start time, after earlier statements in the transaction: it passes on a lease that has since expired; use clock_timestamp\(\)`
}

const currentTimestampSQL = `INSERT INTO orders (epoch, payload) SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3 AND CURRENT_TIMESTAMP < expires_at
                FOR SHARE)`

func currentTimestampAfterEarlierStatement(ctx context.Context, tx pgx.Tx) {
	done(tx.Exec(ctx, `SELECT 1`))
	done(tx.Exec(ctx, currentTimestampSQL, "a", "h", 1, "x")) // want `fence tests expires_at against CURRENT_TIMESTAMP, the transaction's start time`
}

// In a string of statements, the second runs in the same implicit
// transaction as the first. Nothing in the package fences audit or writes
// an epoch into it: no evidence that it needs a fence, and nothing is said.
const manySQL = `SELECT 1;
INSERT INTO orders (epoch, payload) SELECT 1, 'x'
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = 'a' AND holder = 'h' AND epoch = $1 AND expires_at > now()
                FOR SHARE);
INSERT INTO audit (note) VALUES ('x')`

func multiStatement(ctx context.Context) {
	done(pool.Exec(ctx, manySQL)) // want `fence tests expires_at against now\(\), the transaction's start time`
}

func unparsable(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (epoch) SELCT $1`, 1)) // want `SQL does not parse: syntax error at or near "SELCT" \(line 1, column 28 of the statement\)`
}

const unparsableSQL = `SELECT holder
  FROM worker_leases
 WHERE name = $1 AND`

func unparsableConst(ctx context.Context) {
	done(pool.Exec(ctx, unparsableSQL, "a")) // want `SQL does not parse: syntax error at end of input \(line 3, column 21 of the statement\)`
}
