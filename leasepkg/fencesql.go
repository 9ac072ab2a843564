package leasepkg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FenceSQL is [Manager.Fence] for a database/sql transaction: tx on pgx's
// database/sql driver (github.com/jackc/pgx/v5/stdlib), or on another
// PostgreSQL driver, to the lease row's database. It takes the lease row
// FOR KEY SHARE if, when the database checks, l's holder holds the lease
// at exactly l's epoch, unexpired by the database's clock, and returns an
// error wrapping ErrStaleFence if not; every statement of tx then commits
// only before the next epoch is acquired. Call it before the writes it
// guards, best as tx's first statement, and roll tx back on any error.
//
// The guarantees and refusals are Fence's: tx must be READ COMMITTED
// (ErrIsolation otherwise; begin it with sql.LevelReadCommitted, or at
// the server's default), the fence must be at tx's top level, not after a
// SAVEPOINT (ErrSavepoint), and from the fence on the server ends tx's
// session if it idles for Config.IdleInTxTimeout. database/sql sends one
// statement per round trip, so the check for a savepoint, which must
// follow the fence's lock, is a second round trip where Fence sends both
// in one. The context governs the statements.
func (m *Manager) FenceSQL(ctx context.Context, tx *sql.Tx, l Lease) error {
	if err := m.check(); err != nil {
		return err
	}
	var iso string
	var fenced, nested bool
	var idle, txTimeout sql.NullString // what set_config set; only the pgx path may skip them
	err := tx.QueryRowContext(ctx, m.fenceStmt, m.idleInTxSetting(), l.Name, l.Holder, l.Epoch).Scan(&iso, &idle, &txTimeout, &fenced)
	if err == nil && fenced {
		err = tx.QueryRowContext(ctx, subtransactionSQL).Scan(&nested)
	}
	return m.fenceVerdict(l, iso, fenced, nested, err)
}

// TxSQL is [Manager.Tx] on database/sql: it runs fn in a READ COMMITTED
// transaction on db that [Manager.FenceSQL] fences by l first, and
// commits it if fn returns nil; otherwise, or if the fence refuses, it
// rolls back and returns the error (wrapping ErrStaleFence for a refused
// fence). A commit that the server may have applied without confirming it
// returns an error wrapping ErrOutcomeUnknown. The context governs the
// whole transaction; fn must use tx for the writes the fence guards.
func (m *Manager) TxSQL(ctx context.Context, db *sql.DB, l Lease, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := m.check(); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := m.FenceSQL(ctx, tx, l); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// database/sql rolls tx back once ctx has ended, and its Commit
		// would send nothing: a known outcome, which Commit's error would
		// not tell from a context that ended while the commit was sent.
		return fmt.Errorf("commit fenced transaction under %s: %w", l, err)
	}
	if err := tx.Commit(); err != nil {
		if errors.Is(err, sql.ErrTxDone) { // rolled back, as above
			return fmt.Errorf("commit fenced transaction under %s: %w", l, err)
		}
		return fmt.Errorf("commit fenced transaction under %s: %w", l, outcomeError(err))
	}
	return nil
}

// FenceSQL fences tx by the term's current lease (see [Manager.FenceSQL]).
func (t *Term) FenceSQL(ctx context.Context, tx *sql.Tx) error {
	return t.m.FenceSQL(ctx, tx, t.Lease())
}

// TxSQL runs fn in a database/sql transaction on db fenced by the term's
// current lease (see [Manager.TxSQL]).
func (t *Term) TxSQL(ctx context.Context, db *sql.DB, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return t.m.TxSQL(ctx, db, t.Lease(), fn)
}
