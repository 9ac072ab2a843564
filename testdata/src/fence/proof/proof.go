//leaseguard:lease

// Package proof holds two fences that a test in leasepkg runs against a
// real PostgreSQL, on leasepkg's schema and parameters ($1 lease name,
// $2 holder, $3 epoch, $4 order key, $5 payload): the one the rule accepts
// rejects a stale epoch and makes a takeover wait; the one it rejects for
// its missing row lock lets a stale write land.
package proof

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const acceptedSQL = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload)
SELECT $1::text, $3::bigint, $2::text, $4::text, $5::text
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR SHARE)`

const unlockedSQL = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload)
SELECT $1::text, $3::bigint, $2::text, $4::text, $5::text
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp())`

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

func writes(ctx context.Context) {
	done(pool.Exec(ctx, acceptedSQL, "a", "h", 1, "k", "x")) // ok: the fence the rule accepts
	done(pool.Exec(ctx, unlockedSQL, "a", "h", 1, "k", "x")) // want `fence reads worker_leases without a row lock`
}
