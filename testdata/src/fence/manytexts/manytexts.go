//leaseguard:lease

// Package manytexts has a helper that runs the statement it is given, called
// with more texts than one value may hold, and a text too deep to check.
package manytexts

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

func run(ctx context.Context, query string, args ...any) {
	done(pool.Exec(ctx, query, args...))
}

func writes(ctx context.Context) {
	run(ctx, `SELECT 0`)
	run(ctx, `SELECT 1`)
	run(ctx, `SELECT 2`)
	run(ctx, `SELECT 3`)
	run(ctx, `SELECT 4`)
	run(ctx, `SELECT 5`)
	run(ctx, `SELECT 6`)
	run(ctx, `SELECT 7`)
	run(ctx, `SELECT 8`)
	run(ctx, `SELECT 9`)
	run(ctx, `SELECT 10`)
	run(ctx, `SELECT 11`)
	run(ctx, `SELECT 12`)
	run(ctx, `SELECT 13`)
	run(ctx, `SELECT 14`)
	run(ctx, `SELECT 15`)
	run(ctx, `SELECT 16`)
	run(ctx, `SELECT 17`)
	run(ctx, `SELECT 18`)
	run(ctx, `SELECT 19`)
	run(ctx, `INSERT INTO orders (epoch, payload) VALUES ($1, $2)`, 1, "x") // want `INSERT into orders is not fenced`
}

// The parser is not handed a text it may not survive.
func deep(ctx context.Context) {
	_, _ = pool.Exec(ctx, `SELECT ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))`) // want `SQL is too deeply nested to check \(chained operators or subqueries\): the fence rule checks none of it`
}
