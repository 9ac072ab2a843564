//leaseguard:lease

// Package locker renews a lease through store.LockStore on a ticker: a
// failed renewal must stop the work the lease guards, not only be logged.
package locker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"fence/heartbeat/store"
)

// Locker holds one lock.
type Locker struct {
	store  store.LockStore
	id     int64
	holder string
	logger *slog.Logger
	cancel context.CancelFunc
	lost   chan error
}

// heartbeat only logs a failed renewal and goes on: the caller never
// learns it lost the lock.
func (l *Locker) heartbeat(ctx context.Context) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil { // want `the failure of renewal store.LockStore.UpdateLease is only logged: a holder whose renewal failed may have lost the lease, and the work it guards goes on; stop that work when a renewal fails`
				l.logger.WarnContext(ctx, "heartbeat failed", slog.Int64("id", l.id), slog.Any("error", err))
				continue
			}
			l.logger.DebugContext(ctx, "heartbeat")
		}
	}
}

func (l *Locker) printed(ctx context.Context) {
	err := l.store.UpdateLease(ctx, l.id, l.holder) // want `the failure of renewal store.LockStore.UpdateLease is only logged`
	log.Printf("renewed: %v", err)
}

func (l *Locker) discarded(ctx context.Context) {
	_ = l.store.UpdateLease(ctx, l.id, l.holder) // want `the failure of renewal store.LockStore.UpdateLease is discarded`
}

func (l *Locker) retried(ctx context.Context) {
	for range 3 {
		if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil { // want `the failure of renewal store.LockStore.UpdateLease is only logged`
			log.Print(err.Error())
			time.Sleep(time.Second)
		}
	}
}

// renew is the package's own renewer, through the concrete store: it
// returns the store's failure.
func renew(ctx context.Context, p *store.Postgres, holder string) error { // want renew:"renews a lease"
	return p.UpdateLease(ctx, 1, holder)
}

func (l *Locker) concrete(ctx context.Context, p *store.Postgres) {
	if err := p.UpdateLease(ctx, l.id, l.holder); err != nil { // want `the failure of renewal store.Postgres.UpdateLease is only logged`
		log.Println("renew:", err)
	}
	_ = renew(ctx, p, l.holder) // want `the failure of renewal locker.renew is discarded`
}

// A job's lease extended while it runs, as goqite's runner does.
func runJob(ctx context.Context, q *store.Queue, id int64, logger *slog.Logger) {
	go func() {
		for {
			if err := q.Extend(ctx, id); err != nil { // want `the failure of renewal store.Queue.Extend is only logged`
				logger.Info("Error extending message timeout", "id", id, "error", err)
			}
			time.Sleep(time.Second)
		}
	}()
}

// Not reported: each of these acts on the failure.

func (l *Locker) returned(ctx context.Context) error { // want returned:"renews a lease"
	if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	return nil
}

func (l *Locker) cancelled(ctx context.Context) {
	if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil {
		log.Print(err)
		l.cancel()
	}
}

func (l *Locker) sent(ctx context.Context) {
	if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil {
		l.lost <- err
	}
}

func (l *Locker) flagged(ctx context.Context) {
	lost := false
	for !lost {
		if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil {
			log.Print(err)
			lost = true
		}
	}
}

func (l *Locker) stopsOnCancel(ctx context.Context) {
	err := l.store.UpdateLease(ctx, l.id, l.holder)
	if errors.Is(err, context.Canceled) {
		return
	}
}

func (l *Locker) released(ctx context.Context) {
	_ = l.store.Release(ctx, l.id, l.holder) // a release is no renewal
}

// A heartbeat that logs a failed renewal and returns tells no one: its
// caller, which returns nothing, goes on with the work.
func (l *Locker) loggedAndReturned(ctx context.Context) {
	if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil { // want `the failure of renewal store.LockStore.UpdateLease is only logged`
		log.Print(err)
		return
	}
	log.Print("lease renewed")
}

// Renewer is the locker's own view of the store: its method renews the
// lease because the store's that implements it does.
type Renewer interface {
	UpdateLease(ctx context.Context, id int64, holder string) error
}

func ownInterface(ctx context.Context, r Renewer, id int64) {
	if err := r.UpdateLease(ctx, id, "h"); err != nil { // want `the failure of renewal locker.Renewer.UpdateLease is only logged`
		log.Print(err)
	}
}

// prepareTx begins a transaction and returns its commit and rollback
// beside it, as some applications' transaction helpers do.
func prepareTx(ctx context.Context, db *sql.DB) (*sql.Tx, func(context.Context) error, func(), error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return tx, func(context.Context) error { return tx.Commit() }, func() { _ = tx.Rollback() }, nil
}

// extendInTx rolls back when the renewal fails, logs and goes on: the
// rollback cleans up, it does not stop the work.
func extendInTx(ctx context.Context, q *store.Queue, id int64) {
	for range time.Tick(time.Second) {
		tx, commit, rollback, err := prepareTx(ctx, q.DB)
		if err != nil {
			continue
		}
		if err := q.ExtendTx(ctx, tx, id); err != nil { // want `the failure of renewal store.Queue.ExtendTx is only logged`
			rollback()
			log.Print(err)
			continue
		}
		_ = commit(ctx)
	}
}

// The same with the transaction's own Rollback.
func extendRolledBack(ctx context.Context, q *store.Queue, id int64) {
	tx, err := q.DB.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	if err := q.ExtendTx(ctx, tx, id); err != nil { // want `the failure of renewal store.Queue.ExtendTx is only logged`
		_ = tx.Rollback()
		log.Print(err)
		return
	}
	_ = tx.Commit()
}

// ok: rolled back, and the work cancelled.
func (l *Locker) extendCancelled(ctx context.Context, q *store.Queue, id int64) {
	tx, err := q.DB.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	if err := q.ExtendTx(ctx, tx, id); err != nil {
		_ = tx.Rollback()
		l.cancel()
		return
	}
	_ = tx.Commit()
}

// silent goes on after a failed renewal without a word: the failure is
// tested, and ignored.
func (l *Locker) silent(ctx context.Context) {
	for range time.Tick(time.Second) {
		if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil { // want `the failure of renewal store.LockStore.UpdateLease is ignored`
			continue
		}
		l.logger.DebugContext(ctx, "renewed")
	}
}

// ok: the work runs only after a renewal that succeeded; a failed one
// skips it.
func (l *Locker) skipsWork(ctx context.Context, work func()) {
	for range time.Tick(time.Second) {
		if err := l.store.UpdateLease(ctx, l.id, l.holder); err != nil {
			continue
		}
		work()
	}
}
