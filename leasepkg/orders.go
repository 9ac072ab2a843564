package leasepkg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Order is one row of the guarded table.
type Order struct {
	// Key is the caller's idempotency key, unique across all orders. Required.
	Key string
	// Payload is the order's content.
	Payload string
}

// AppendOrder writes o under l, fenced, as one statement that is its own
// transaction: the row lands only if, when the database checks, l's holder
// holds the lease at exactly l's epoch and the lease has not expired by the
// database's clock. A rejected write returns an error wrapping
// ErrStaleFence with nothing written; a write whose connection failed before
// its outcome was known returns one wrapping ErrOutcomeUnknown. The context
// governs the statement.
//
// The statement writes one row or none, so there is never a partial write to
// roll back, and sending it alone saves the two round trips of BEGIN and
// COMMIT. To make the write together with others, use AppendOrderTx.
func (m *Manager) AppendOrder(ctx context.Context, l Lease, o Order) error {
	if err := m.check(); err != nil {
		return err
	}
	if o.Key == "" {
		return errors.New("append order: key must not be empty")
	}
	err := m.appendOne(ctx, l, o)
	if err != nil {
		return fmt.Errorf("append order %q under %s: %w", o.Key, l, err)
	}
	return nil
}

func (m *Manager) appendOne(ctx context.Context, l Lease, o Order) error {
	// Acquire apart from the statement: a failure here sent nothing, so its
	// outcome is known.
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tag, err := conn.Exec(ctx, m.appendSQL, l.Name, l.Holder, l.Epoch, o.Key, o.Payload)
	if err != nil {
		return outcomeError(writeError(err))
	}
	return m.checkFenced(l, tag, 1)
}

// AppendOrders writes all of orders under l with one fenced statement in a
// transaction that commits only if every row landed: all of them land, or
// none. Errors are as for AppendOrder; the context governs the transaction.
func (m *Manager) AppendOrders(ctx context.Context, l Lease, orders []Order) error {
	if len(orders) == 0 {
		return nil
	}
	keys := make([]string, len(orders))
	payloads := make([]string, len(orders))
	for i, o := range orders {
		if o.Key == "" {
			return fmt.Errorf("append orders: key of order %d must not be empty", i)
		}
		keys[i], payloads[i] = o.Key, o.Payload
	}
	err := m.appendInTx(ctx, l, int64(len(orders)), m.appendBatchSQL, l.Name, l.Holder, l.Epoch, keys, payloads)
	if err != nil {
		return fmt.Errorf("append %d orders under %s: %w", len(orders), l, err)
	}
	return nil
}

// AppendOrderTx writes o under l, fenced, inside the caller's transaction,
// so that it commits or rolls back with the caller's other writes. The
// transaction must be READ COMMITTED: the fence must read the lease row as
// it is now, not as of a snapshot; in any other the call returns an error
// wrapping ErrIsolation (the check travels in the same round trip as the
// write). From the fence on, the server ends the transaction's session if
// it idles for Config.IdleInTxTimeout, so that a holder cut off from the
// database cannot keep the lease row locked against a takeover. Like
// [Manager.Fence], it must run at the transaction's top level, and returns
// an error wrapping ErrSavepoint inside a savepoint. On any error the caller must roll back: on ErrStaleFence nothing
// was written, and its other writes were made under a lease it does not
// hold.
func (m *Manager) AppendOrderTx(ctx context.Context, tx pgx.Tx, l Lease, o Order) error {
	if err := m.check(); err != nil {
		return err
	}
	if o.Key == "" {
		return errors.New("append order: key must not be empty")
	}
	b := &pgx.Batch{}
	b.Queue(m.sessionSQL, m.idleInTxSetting())
	b.Queue(m.appendSQL, l.Name, l.Holder, l.Epoch, o.Key, o.Payload)
	b.Queue(subtransactionSQL)
	br := tx.SendBatch(ctx, b)
	var iso string
	var tag pgconn.CommandTag
	var nested bool
	err := br.QueryRow().Scan(&iso, nil, nil)
	if err == nil {
		tag, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&nested)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil && iso != readCommittedName:
		err = isolationError(iso)
	case err == nil && tag.RowsAffected() == 1 && nested:
		err = ErrSavepoint
	case err == nil:
		err = m.checkFenced(l, tag, 1)
	}
	if err != nil {
		return fmt.Errorf("append order %q under %s: %w", o.Key, l, writeError(err))
	}
	return nil
}

// appendInTx runs one fenced statement that writes want rows or none in a
// transaction of its own, sent with its BEGIN and COMMIT in one round trip,
// so that the transaction never idles with the lease row locked. A fence
// that refused commits an empty transaction.
func (m *Manager) appendInTx(ctx context.Context, l Lease, want int64, sql string, args ...any) error {
	if err := m.check(); err != nil {
		return err
	}
	err := inTx(ctx, m.pool, 0, func(b *pgx.Batch) {
		b.Queue(sql, args...)
	}, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		return m.checkFenced(l, tag, want)
	})
	return writeError(err)
}

// checkFenced turns a fenced statement's row count into the verdict: the
// fence admitted the write exactly when every row landed.
func (m *Manager) checkFenced(l Lease, tag pgconn.CommandTag, want int64) error {
	if tag.RowsAffected() == want {
		return nil
	}
	m.observe(WriteRejected, l, ErrStaleFence)
	return ErrStaleFence
}

// writeError maps the server's refusal of a duplicate key to
// ErrDuplicateOrder, and a serialization failure to ErrIsolation.
func writeError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == "orders":
		return fmt.Errorf("%w: %w", ErrDuplicateOrder, err)
	case errors.As(err, &pgErr) && pgErr.Code == "40001": // serialization_failure
		return fmt.Errorf("%w: %w", ErrIsolation, err)
	}
	return err
}
