//leaseguard:lease

// Package orders is a table of your own guarded by a lease: the demo that
// the failover example, leasepkg's tests and the fault suite write to. It
// is not part of the lease package, which fences any write through
// [leasepkg.Manager.Fence] and [leasepkg.Manager.Tx]; it shows how a
// guarded table is made and written.
//
// Every order records the lease name, epoch and holder that wrote it, and
// is written in a transaction whose first statement is the lease's fence:
// it commits only before the next epoch is acquired, or not at all, so no
// order lands under a stale epoch. The order key is the caller's
// idempotency key: a write whose outcome is unknown
// ([leasepkg.ErrOutcomeUnknown]) can be looked up by it, or sent again
// without landing twice.
//
// The package is a lease package to leaseguard, as yours would be: its
// writes carry the epoch, and the fence rule sees that leasepkg's Fence
// and Tx fenced the transactions they run in.
package orders

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// Schema creates the orders table if it does not exist.
const Schema = `CREATE TABLE IF NOT EXISTS orders (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lease_name text        NOT NULL,
    epoch      bigint      NOT NULL,
    holder     text        NOT NULL,
    order_key  text        NOT NULL UNIQUE,
    payload    text        NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`

// Execer is what Migrate needs of a pool, a connection or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Migrate creates the orders table if it does not exist. The context
// governs the statement.
func Migrate(ctx context.Context, db Execer) error {
	if _, err := db.Exec(ctx, Schema); err != nil {
		return fmt.Errorf("migrate orders: %w", err)
	}
	return nil
}

// Order is one row of the guarded table.
type Order struct {
	// Key is the caller's idempotency key, unique across all orders. Required.
	Key string
	// Payload is the order's content.
	Payload string
}

// ErrDuplicate means an order with the same key was already written.
var ErrDuplicate = errors.New("duplicate order key")

// insertSQL writes orders under a lease in a transaction that the lease's
// fence has guarded. $1 lease name, $2 holder, $3 epoch, $4 order keys,
// $5 payloads.
const insertSQL = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload)
SELECT $1::text, $3::bigint, $2::text, o.order_key, o.payload
  FROM unnest($4::text[], $5::text[]) AS o(order_key, payload)`

// AppendOrder writes o under l in a transaction of its own that m fences
// by l ([leasepkg.Manager.Tx]): it lands only if, when the fence runs, l's
// holder holds the lease at exactly l's epoch, unexpired by the database's
// clock, and commits before the next epoch is acquired. A refused write
// returns an error wrapping [leasepkg.ErrStaleFence] with nothing written,
// a key already written one wrapping ErrDuplicate, and a commit that was
// not confirmed one wrapping [leasepkg.ErrOutcomeUnknown]. The context
// governs the transaction.
func AppendOrder(ctx context.Context, m *leasepkg.Manager, l leasepkg.Lease, o Order) error {
	if err := appendTx(ctx, m, l, []Order{o}); err != nil {
		return fmt.Errorf("append order %q: %w", o.Key, err)
	}
	return nil
}

// AppendOrders writes all of batch under l in one fenced transaction, as
// AppendOrder does: all of them land, or none.
func AppendOrders(ctx context.Context, m *leasepkg.Manager, l leasepkg.Lease, batch []Order) error {
	if err := appendTx(ctx, m, l, batch); err != nil {
		return fmt.Errorf("append %d orders: %w", len(batch), err)
	}
	return nil
}

func appendTx(ctx context.Context, m *leasepkg.Manager, l leasepkg.Lease, batch []Order) error {
	if err := check(batch); err != nil {
		return err
	}
	return m.Tx(ctx, l, func(ctx context.Context, tx pgx.Tx) error {
		return Insert(ctx, tx, l, batch...)
	})
}

// AppendOrderTx writes o under l in the caller's transaction tx: it fences
// tx by l ([leasepkg.Manager.Fence]: tx must be READ COMMITTED, and this
// call at its top level, not in a savepoint), then writes o, so that o
// commits or rolls back with tx's other writes, and tx commits only before
// the next epoch is acquired. On any error, roll tx back.
func AppendOrderTx(ctx context.Context, m *leasepkg.Manager, tx pgx.Tx, l leasepkg.Lease, o Order) error {
	if err := check([]Order{o}); err != nil {
		return fmt.Errorf("append order: %w", err)
	}
	if err := m.Fence(ctx, tx, l); err != nil {
		return fmt.Errorf("append order %q: %w", o.Key, err)
	}
	if err := Insert(ctx, tx, l, o); err != nil {
		return fmt.Errorf("append order %q: %w", o.Key, err)
	}
	return nil
}

// Insert writes batch under l in tx, which the caller has fenced by l
// ([leasepkg.Manager.Fence], [leasepkg.Term.Tx]): it records l's name,
// epoch and holder in each row, and checks nothing itself.
func Insert(ctx context.Context, tx pgx.Tx, l leasepkg.Lease, batch ...Order) error {
	keys := make([]string, len(batch))
	payloads := make([]string, len(batch))
	for i, o := range batch {
		keys[i], payloads[i] = o.Key, o.Payload
	}
	tag, err := tx.Exec(ctx, insertSQL, l.Name, l.Holder, l.Epoch, keys, payloads)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == "orders": // unique_violation
		return fmt.Errorf("%w: %w", ErrDuplicate, err)
	case err != nil:
		return err
	case tag.RowsAffected() != int64(len(batch)):
		return fmt.Errorf("%d of %d orders written", tag.RowsAffected(), len(batch))
	}
	return nil
}

// check refuses orders without a key.
func check(batch []Order) error {
	for i, o := range batch {
		if o.Key == "" {
			return fmt.Errorf("key of order %d must not be empty", i)
		}
	}
	return nil
}
