//leaseguard:lease

// Package limitations keeps the cases that the fence rule knowingly gets
// wrong: misses, each of which would need more than the rule can see, and
// one false report.
package limitations

import (
	"context"

	"example.com/sqlrun"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// SQL that another package runs: the text is recovered only from calls
// inside the lease package.
func otherPackage(ctx context.Context) {
	_ = sqlrun.Run(ctx, pool, `INSERT INTO orders (payload) VALUES ($1)`, "x")
}

// SQL that an exported function is given: its callers may be anywhere.
func Write(ctx context.Context, query string) {
	_, _ = pool.Exec(ctx, query)
}

// A batch's results are read from BatchResults, which are not followed:
// a refused write's zero rows go unread here.
func batch(ctx context.Context) {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO orders (epoch) SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)`, "a", "h", 1)
	_ = pool.SendBatch(ctx, b).Close()
}

// COPY cannot carry a fence, and CopyFrom names its table as a
// pgx.Identifier, not in SQL: not read.
func copyFrom(ctx context.Context) {
	_, _ = pool.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"payload"}, pgx.CopyFromRows([][]any{{"x"}}))
}

// A UNION's arms are not followed: a write whose every arm is fenced is
// still reported as unfenced. (A UNION with an unfenced arm is rightly
// reported: that arm writes whatever the lease says.)
const unionSQL = `INSERT INTO orders (epoch)
SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)
UNION ALL
SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)`

func union(ctx context.Context) {
	_, _ = pool.Exec(ctx, unionSQL, "a", "h", 1) // want `INSERT into orders is not fenced`
}

// A text with more choices than the rule follows (sixteen) counts as not
// recoverable.
func tooManyChoices(ctx context.Context, a, b, c, d, e bool) {
	t := "orders"
	if a {
		t = "orders_a"
	}
	if b {
		t += "_b"
	}
	if c {
		t += "_c"
	}
	if d {
		t += "_d"
	}
	if e {
		t += "_e"
	}
	_, _ = pool.Exec(ctx, "INSERT INTO "+t+" (payload) VALUES ($1)", "x")
}
