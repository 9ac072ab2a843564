//leaseguard:lease

// Package fenced has correct fences in the shapes lease code writes them:
// none is reported.
package fenced

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

// ok: EXISTS on holder, epoch and the database clock, under FOR SHARE.
const existsSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR SHARE)`

// ok: a join in INSERT ... SELECT, aliased, the lease row locked by name.
const joinSQL = `INSERT INTO orders (epoch, payload)
SELECT l.epoch, $4
  FROM worker_leases AS l
 WHERE l.name = $1 AND l.holder = $2 AND l.epoch = $3::bigint
   AND clock_timestamp() < l.expires_at
   FOR NO KEY UPDATE OF l`

// ok: a CTE that reads the lease row under lock, joined by the write.
const cteSQL = `WITH fence AS (
       SELECT epoch FROM worker_leases
        WHERE name = $1 AND holder = $2 AND epoch = $3
          AND expires_at > statement_timestamp()
          FOR UPDATE)
INSERT INTO orders (epoch, payload)
SELECT fence.epoch, $4 FROM fence`

// ok: UPDATE ... FROM a locked subquery of the lease table.
const updateFromSQL = `UPDATE orders AS o
   SET payload = $4
  FROM (SELECT 1 FROM worker_leases
         WHERE name = $1 AND holder = $2 AND epoch = $3
           AND expires_at > clock_timestamp()
           FOR SHARE) AS f
 WHERE o.id = $5`

// ok: DELETE with EXISTS.
const deleteSQL = `DELETE FROM orders
 WHERE id = $4
   AND EXISTS (SELECT 1 FROM worker_leases l
                WHERE l.name = $1 AND l.holder = $2 AND l.epoch = $3
                  AND l.expires_at >= clock_timestamp()
                FOR SHARE)`

// ok: now() is safe in the first statement of its transaction.
const nowFirstSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > now()
                FOR SHARE)`

func writes(ctx context.Context, tx pgx.Tx) {
	done(pool.Exec(ctx, existsSQL, "a", "h", 1, "x"))
	done(pool.Exec(ctx, joinSQL, "a", "h", 1, "x"))
	done(pool.Exec(ctx, cteSQL, "a", "h", 1, "x"))
	done(pool.Exec(ctx, updateFromSQL, "a", "h", 1, "x", 7))
	done(pool.Exec(ctx, deleteSQL, "a", "h", 1, 7))
	done(pool.Exec(ctx, nowFirstSQL, "a", "h", 1, "x"))
	done(tx.Exec(ctx, nowFirstSQL, "a", "h", 1, "x")) // ok: the first statement on this transaction here
}

// ok: reads are no writes, and the lease table's own rows need no fence.
func reads(ctx context.Context, db *sql.DB) {
	var holder string
	_ = pool.QueryRow(ctx, `SELECT holder FROM worker_leases WHERE name = $1`, "a").Scan(&holder)
	_, _ = db.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, 1)
	_, _ = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS audit (note text)`)
}

// renewSQL is the package's renewal, which shows worker_leases is the
// lease table.
const renewSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()
RETURNING epoch`

func renew(ctx context.Context) {
	var epoch int64
	_ = pool.QueryRow(ctx, renewSQL, "a", "h", 1, 15000).Scan(&epoch)
}
