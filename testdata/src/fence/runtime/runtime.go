//leaseguard:lease

// Package runtime keeps its lease table's name in a field that the user
// sets: the statements that set the holder and expiry show which table is
// the lease table, and messages name the Go expression.
package runtime

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

type Client struct {
	pool      *pgxpool.Pool
	tableName string
}

func New(pool *pgxpool.Pool, table string) *Client { return &Client{pool: pool, tableName: table} }

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost lease")
	}
}

func (c *Client) renew(ctx context.Context, until any) {
	done(c.pool.Exec(ctx, "UPDATE "+c.tableName+" SET expires_at = $3 WHERE name = $1 AND holder = $2", "a", "h", until)) // want `UPDATE of the table named by c.tableName sets expires_at from \$3, a time the process chose` `renewal does not test expires_at > clock_timestamp\(\)`
}

func (c *Client) acquire(ctx context.Context) {
	done(c.pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s (name, holder, expires_at) VALUES ($1, $2, clock_timestamp() + interval '15 s') ON CONFLICT (name) DO UPDATE SET holder = $2, expires_at = $3 WHERE %s.expires_at < clock_timestamp()", c.tableName, c.tableName), "a", "h")) // want `INSERT into the table named by c.tableName sets expires_at from \$3`
}

// ok: a release; the package writes no epoch, so deleting the row
// restarts nothing.
func (c *Client) release(ctx context.Context) {
	_, _ = c.pool.Exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE name = $1 AND holder = $2", c.tableName), "a", "h")
}

// ok: a write to another table built in at run time: no evidence that it
// needs a fence.
func (c *Client) history(ctx context.Context, table string) {
	_, _ = c.pool.Exec(ctx, "INSERT INTO "+table+" (note) VALUES ($1)", "x")
}

// A token from a sequence, kept as it was where the row is not taken: not a
// counter, so deleting the row restarts nothing.
func (c *Client) takeWithSequence(ctx context.Context) {
	done(c.pool.Exec(ctx, "INSERT INTO "+c.tableName+` (name, epoch, holder) VALUES ($1, nextval('rvn'), $2)
ON CONFLICT (name) DO UPDATE SET epoch = CASE WHEN `+c.tableName+`.epoch = $3 THEN nextval('rvn') ELSE `+c.tableName+`.epoch END, holder = $2`, "a", "h", 1))
}

// ok: a migration's backfill of another table named at run time, which
// reads that table in a WITH and tests nothing of a lease: no fence, so no
// fenced write whose rows affected need a check.
func (c *Client) backfill(ctx context.Context, state string) {
	_, _ = c.pool.Exec(ctx, `WITH ranked AS (SELECT key, row_number() OVER (ORDER BY key) AS rn FROM `+state+` WHERE row_id IS NULL)
UPDATE `+state+` AS t SET row_id = r.rn FROM ranked r WHERE r.key = t.key`)
}
