//leaseguard:lease

// Package text builds its SQL: the rule reads what can be recovered and
// guesses at nothing else.
package text

import (
	"context"
	"fmt"

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

const (
	ordersTable = "orders"
	leaseTable  = "worker_leases"
	insertHead  = "INSERT INTO " + ordersTable + " (epoch, payload) SELECT $3, $4 "
)

// Concatenated constants.
func concatenated(ctx context.Context) {
	done(pool.Exec(ctx, insertHead+"WHERE EXISTS (SELECT 1 FROM "+leaseTable+" WHERE name = $1 AND holder = $2 FOR SHARE)", "a", "h", 1, "x")) // want `fence does not test the epoch \(epoch = \$n\) or expiry`
}

// fmt.Sprintf with a constant format and constant arguments.
func sprintf(ctx context.Context) {
	q := fmt.Sprintf("INSERT INTO %s (epoch, payload) VALUES ($1, $2)", ordersTable)
	done(pool.Exec(ctx, q, 1, "x")) // want `INSERT into orders is not fenced`
}

// A package variable assigned only constants is followed.
var guarded = "orders"

func variable(ctx context.Context) {
	done(pool.Exec(ctx, "DELETE FROM "+guarded+" WHERE id = $1", 7)) // want `DELETE from orders is not fenced`
}

// A table name that the caller passes in stands in as a placeholder: the
// statement still parses, and a fence in it is still checked.
func Placeholder(ctx context.Context, table string) {
	done(pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s (epoch) SELECT $3 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp())", table), "a", "h", 1)) // want `fence reads worker_leases without a row lock`
}

// ok: the written table is built in at run time and nothing reads the
// lease table: it may be the lease table itself, so nothing is guessed.
func PlaceholderUnknown(ctx context.Context, table string) {
	done(pool.Exec(ctx, "UPDATE "+table+" SET payload = $1", "x"))
}

// A part in a string literal's place is data, not structure: the write
// is still unfenced, whatever it holds.
func PlaceholderValue(ctx context.Context, v string) {
	done(pool.Exec(ctx, "INSERT INTO orders (payload) VALUES ('"+v+"')")) // want `INSERT into orders is not fenced`
}

// ok: the rest of the statement comes from the caller: with a placeholder
// there, the text does not parse, and is not checked.
func PlaceholderTail(ctx context.Context, rest string) {
	done(pool.Exec(ctx, "INSERT INTO orders "+rest))
}

// ok: not recoverable at all (an exported function's parameter).
func Exec(ctx context.Context, query string) {
	done(pool.Exec(ctx, query))
}

// A query kept in a struct field that is set once, from a constant.
type store struct {
	appendSQL string
}

func newStore() *store {
	return &store{appendSQL: `INSERT INTO orders (epoch, payload) SELECT $3, $4 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = $1 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE)`}
}

func (s *store) append(ctx context.Context) {
	done(pool.Exec(ctx, s.appendSQL, "a", 1, "x")) // want `fence does not test the holder`
}

// A query chosen between constants: each is checked.
func chosen(ctx context.Context, bump bool) {
	q := `UPDATE worker_leases SET expires_at = clock_timestamp() + interval '15 s' WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`
	if bump {
		q = `UPDATE worker_leases SET epoch = epoch + 1, expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`
	}
	done(pool.Exec(ctx, q, "a", "h", 1)) // want `UPDATE of worker_leases sets expires_at from \$4`
}

// A helper of this package that runs the statement it is given: the text
// is recovered at each call, and reported there.
func (s *store) run(ctx context.Context, query string, args ...any) {
	done(pool.Exec(ctx, query, args...))
}

func viaHelper(ctx context.Context, s *store) {
	s.run(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x") // want `INSERT into orders is not fenced`
	s.run(ctx, `SELECT 1`)
}

// pgx named arguments are parameters, not PostgreSQL's @ operator.
func named(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (epoch, payload) SELECT @epoch, @payload WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = @name AND holder=@holder AND epoch = @epoch AND expires_at > clock_timestamp() FOR SHARE)`,
		pgx.NamedArgs{"name": "a", "holder": "h", "epoch": 1, "payload": "x"}))
	done(pool.Exec(ctx, `INSERT INTO orders (epoch, payload) SELECT @epoch, @payload WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = @name AND holder = @holder AND epoch = @epoch AND expires_at > @now FOR SHARE)`, // want `fence tests expires_at against @now, a time the process chose`
		pgx.NamedArgs{"name": "a", "holder": "h", "epoch": 1, "payload": "x"}))
}

// An @ in a string or a comment is left alone.
func atInString(ctx context.Context) {
	done(pool.Exec(ctx, `INSERT INTO orders (payload) VALUES ('mail@example.com') -- @nobody`)) // want `INSERT into orders is not fenced`
}

// DBTX is the interface sqlc generates.
type DBTX interface {
	Exec(context.Context, string, ...interface{}) (pgconn.CommandTag, error)
	Query(context.Context, string, ...interface{}) (pgx.Rows, error)
	QueryRow(context.Context, string, ...interface{}) pgx.Row
}

type Queries struct{ db DBTX }

const createOrder = `-- name: CreateOrder :exec
INSERT INTO orders (epoch, payload) VALUES ($1, $2)
`

func (q *Queries) CreateOrder(ctx context.Context, epoch int64, payload string) error {
	_, err := q.db.Exec(ctx, createOrder, epoch, payload) // want `INSERT into orders is not fenced`
	return err
}

// A helper of this package that returns the statement and its arguments:
// what it returns is read at each call, its format the caller's, and the
// write reported where it is sent.
func writeWithEpoch(format string, epoch int64, payload string) (string, []any) {
	return fmt.Sprintf(format, ordersTable), []any{epoch, payload}
}

func deleteOrderSQL() string { return "DELETE FROM " + ordersTable + " WHERE id = $1" }

func returned(ctx context.Context) {
	q, args := writeWithEpoch("UPDATE %s SET payload = $2 WHERE epoch = $1", 1, "x")
	done(pool.Exec(ctx, q, args...)) // want `UPDATE of orders is not fenced`
	q, args = writeWithEpoch("INSERT INTO %s (epoch, payload) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM worker_leases WHERE name = 'a' AND holder = 'h' AND epoch = $1 AND expires_at > clock_timestamp() FOR SHARE)", 1, "x")
	done(pool.Exec(ctx, q, args...))          // ok: fenced
	done(pool.Exec(ctx, deleteOrderSQL(), 7)) // want `DELETE from orders is not fenced`
}
