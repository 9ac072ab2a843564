package leasepkg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Fence fences the caller's transaction tx by l: it takes the lease row FOR
// KEY SHARE if, when the database checks, l's holder holds the lease at
// exactly l's epoch, unexpired by the database's clock, and returns an error
// wrapping ErrStaleFence if not. Call it before the writes it guards,
// best as tx's first statement: every statement of tx, before or after
// it, then commits only before the next epoch is acquired, since every
// change of the epoch waits for tx to end. On any error, roll tx back.
//
// The fence must be taken at tx's top level: inside a savepoint (a nested
// pgx transaction, or a SAVEPOINT statement), where rolling back to the
// savepoint would release the row lock while tx goes on, it returns an
// error wrapping ErrSavepoint, as it does after a savepoint that wrote and
// was released, which the database does not tell apart. The check travels
// in the same round trip as the fence.
//
// tx must be READ COMMITTED (ErrIsolation otherwise), and from the fence
// on the server ends tx's session if it idles for Config.IdleInTxTimeout,
// so that a holder cut off from the database cannot hold the lease row
// against a takeover. Fence reads no clock of the process's. The context
// governs the statement.
//
// The guarantee covers writes in tx to tables in the lease row's database:
// expiry is tested when Fence runs, not when tx commits, so a transaction
// that commits after the lease's expiry still commits before any takeover.
func (m *Manager) Fence(ctx context.Context, tx pgx.Tx, l Lease) error {
	if err := m.check(); err != nil {
		return err
	}
	var iso string
	var fenced, nested bool
	b := &pgx.Batch{}
	b.Queue(m.fenceStmt, m.idleInTxSetting(), l.Name, l.Holder, l.Epoch)
	b.Queue(subtransactionSQL)
	br := tx.SendBatch(ctx, b)
	err := br.QueryRow().Scan(&iso, nil, nil, &fenced)
	if err == nil {
		err = br.QueryRow().Scan(&nested)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return m.fenceVerdict(l, iso, fenced, nested, err)
}

// fenceVerdict is the fence's answer from what its statements said: the
// transaction's isolation level, whether the lease row was locked at
// exactly l, whether the transaction holds a subtransaction's id, or err.
func (m *Manager) fenceVerdict(l Lease, iso string, fenced, nested bool, err error) error {
	switch {
	case err != nil:
		err = writeError(err)
	case iso != readCommittedName:
		err = isolationError(iso)
	case fenced && nested:
		err = ErrSavepoint
	case !fenced:
		m.observe(WriteRejected, l, ErrStaleFence)
		err = ErrStaleFence
	}
	if err != nil {
		return fmt.Errorf("fence under %s: %w", l, err)
	}
	return nil
}

// Tx runs fn in a READ COMMITTED transaction on the Manager's pool that
// [Manager.Fence] fences by l first, and commits it if fn returns nil;
// otherwise, or if the fence refuses, it rolls back and returns the error
// (wrapping ErrStaleFence for a refused fence). A commit that the server
// may have applied without confirming it returns an error wrapping
// ErrOutcomeUnknown. The context governs the whole transaction; fn must
// use tx for the writes the fence guards.
func (m *Manager) Tx(ctx context.Context, l Lease, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if err := m.check(); err != nil {
		return err
	}
	tx, err := m.pool.BeginTx(ctx, readCommitted)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := m.Fence(ctx, tx, l); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit fenced transaction under %s: %w", l, outcomeError(err))
	}
	return nil
}

// Fence fences tx by the term's current lease (see [Manager.Fence]).
func (t *Term) Fence(ctx context.Context, tx pgx.Tx) error {
	return t.m.Fence(ctx, tx, t.Lease())
}

// Tx runs fn in a transaction fenced by the term's current lease (see
// [Manager.Tx]).
func (t *Term) Tx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return t.m.Tx(ctx, t.Lease(), fn)
}

// writeError maps a serialization failure of a fenced statement to
// ErrIsolation.
func writeError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "40001" { // serialization_failure
		return fmt.Errorf("%w: %w", ErrIsolation, err)
	}
	return err
}
