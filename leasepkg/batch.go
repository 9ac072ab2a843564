package leasepkg

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// inTx sends, in one round trip, BEGIN ISOLATION LEVEL READ COMMITTED,
// when wait is positive a lock_timeout and a statement_timeout of wait for
// the transaction, the statements that queue adds, and COMMIT; read reads
// the results of queue's statements in order. Nothing waits between
// statements for the client, so the transaction is never idle in the
// server while it holds row locks, and a partitioned client leaves nothing
// open behind it.
//
// COMMIT is sent with the statements, so it runs unless a statement fails:
// queue's statements must be ones whose effects may commit whatever read
// makes of their results (a fenced write that writes all of its rows or
// none); read's verdicts pgx.ErrNoRows and ErrStaleFence are returned as
// they are. Other errors are classified by outcomeError: once the batch is
// sent, only an error of the server that rolls the transaction back (or a
// failure before anything was sent) is a known outcome.
//
// Both timeouts are needed: lock_timeout bounds one wait for a lock, but a
// row lock under FOR KEY SHARE can pass from writer to writer, each wait
// short, while the FOR UPDATE that waits for them all never gets it;
// statement_timeout bounds the statement. The server ends the statement
// with 55P03 or 57014 (isWaitTimeout), a known outcome, before the
// client's context would end it with an unknown one.
func inTx(ctx context.Context, db batchSender, wait time.Duration, queue func(*pgx.Batch), read func(pgx.BatchResults) error) (err error) {
	b := &pgx.Batch{}
	b.BeginTx(readCommitted)
	if wait > 0 {
		ms := strconv.FormatInt(wait.Milliseconds(), 10) + "ms"
		b.Queue("SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $1, true)", ms)
	}
	queue(b)
	b.Queue("COMMIT")
	br := db.SendBatch(ctx, b)
	// After a COMMIT in the batch the transaction is closed and Rollback
	// only returns the connection to the pool; after a failed statement it
	// ends the aborted transaction, which holds no locks, but only waits
	// for its ROLLBACK.
	tx := br.Tx()
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	_, err = br.Exec() // begin
	if err == nil && wait > 0 {
		_, err = br.Exec() // set_config
	}
	if err == nil {
		err = read(br)
		if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, ErrStaleFence) {
			// A verdict on results that the server sent: the statements
			// changed nothing, whatever became of the COMMIT.
			_ = br.Close()
			return err
		}
	}
	if err == nil {
		_, err = br.Exec() // commit
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return outcomeError(err)
	}
	return nil
}

// batchSender is a pool or a connection.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// isWaitTimeout says whether err is the server ending a statement that
// waited too long: lock_not_available (lock_timeout), query_canceled
// (statement_timeout, or a cancel request), or, on PostgreSQL 17 and later,
// transaction_timeout (25P04, which ends the session too) where a server,
// role or database sets one shorter than the wait. Either way the
// statement's transaction rolled back.
func isWaitTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "55P03" || pgErr.Code == "57014" || pgErr.Code == "25P04")
}
