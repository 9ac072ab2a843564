//leaseguard:lease

// Package lock has fences without the row lock that a takeover waits for.
package lock

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("stale fence; drop the write")
	}
}

const unlockedSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp())`

func unlocked(ctx context.Context) {
	done(pool.Exec(ctx, unlockedSQL, "a", "h", 1, "x")) // want `fence reads worker_leases without a row lock: a takeover can commit between the check and this write's commit; add FOR SHARE`
}

func unlockedInline(ctx context.Context) {
	done(pool.Exec(ctx, `DELETE FROM orders WHERE id = $4 AND EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp())`, "a", "h", 1, 7)) // want `fence reads worker_leases without a row lock`
}

const unlockedCTESQL = `WITH fence AS (
       SELECT epoch FROM worker_leases
        WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp())
INSERT INTO orders (epoch, payload) SELECT fence.epoch, $4 FROM fence`

func unlockedCTE(ctx context.Context) {
	done(pool.Exec(ctx, unlockedCTESQL, "a", "h", 1, "x")) // want `fence reads worker_leases without a row lock`
}

// No locking clause can go in an UPDATE's FROM: no fix is offered.
const updateFromSQL = `UPDATE orders o SET payload = $4
  FROM worker_leases l
 WHERE o.id = $5 AND l.name = $1 AND l.holder = $2 AND l.epoch = $3 AND l.expires_at > clock_timestamp()`

func updateFrom(ctx context.Context) {
	done(pool.Exec(ctx, updateFromSQL, "a", "h", 1, "x", 7)) // want `fence reads worker_leases without a row lock`
}

// The lock names another table: the lease row is not locked.
const otherLockSQL = `INSERT INTO orders (epoch, payload)
SELECT l.epoch, $4 FROM worker_leases l, accounts a
 WHERE a.id = 1 AND l.name = $1 AND l.holder = $2 AND l.epoch = $3 AND l.expires_at > clock_timestamp()
   FOR SHARE OF a`

func otherLock(ctx context.Context) {
	done(pool.Exec(ctx, otherLockSQL, "a", "h", 1, "x")) // want `fence reads worker_leases without a row lock`
}

// Nothing in this package makes the epoch a key column, so FOR KEY SHARE
// does not conflict with the takeover's update of it.
const keyShareSQL = `INSERT INTO orders (epoch, payload)
SELECT $3, $4
 WHERE EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $1 AND holder = $2 AND epoch = $3
                  AND expires_at > clock_timestamp()
                FOR KEY SHARE)`

func keyShareWithoutKey(ctx context.Context) {
	done(pool.Exec(ctx, keyShareSQL, "a", "h", 1, "x")) // want `fence takes FOR KEY SHARE, which a takeover does not wait for unless epoch is a key column, and no unique key on worker_leases includes it: use FOR SHARE, or add UNIQUE \(name, epoch\)`
}
