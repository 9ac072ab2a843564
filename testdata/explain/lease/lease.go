//leaseguard:lease

// Package lease holds job locks whose columns its SQL alone names, in a
// table whose name is a setting, and runs SQL that its caller gives.
package lease

import (
	"context"
	"database/sql"
	"errors"
)

// Locks takes and renews job locks.
type Locks struct {
	DB    *sql.DB
	Audit string // the audit table's name
}

const acquireSQL = `UPDATE job_locks
   SET locked_by = $2, fencing_token = fencing_token + 1,
       lease_expires_at = clock_timestamp() + $3 * interval '1 second'
 WHERE job = $1 AND lease_expires_at < clock_timestamp()`

const renewSQL = `UPDATE job_locks
   SET lease_expires_at = clock_timestamp() + $3 * interval '1 second'
 WHERE job = $1 AND locked_by = $2 AND lease_expires_at > clock_timestamp()`

var errLost = errors.New("lost the lock")

func one(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errLost
	}
	return nil
}

// Acquire takes the lock on job for worker.
func (l *Locks) Acquire(ctx context.Context, job, worker string) error {
	return one(l.DB.ExecContext(ctx, acquireSQL, job, worker, 15))
}

// Renew extends the lock.
func (l *Locks) Renew(ctx context.Context, job, worker string) error {
	return one(l.DB.ExecContext(ctx, renewSQL, job, worker, 15))
}

// Note writes to the audit table, whose name is a setting.
func (l *Locks) Note(ctx context.Context, job, rest string) error {
	_, err := l.DB.ExecContext(ctx, "INSERT INTO "+l.Audit+" "+rest, job)
	return err
}

// Exec runs the caller's SQL.
func (l *Locks) Exec(ctx context.Context, query string) error {
	_, err := l.DB.ExecContext(ctx, query)
	return err
}

// History is where a job's past locks are kept: an interface whose
// method returns a database's answer, so its calls are SQL calls.
type History interface {
	Record(ctx context.Context, job, worker string) (sql.Result, error)
}

// Record keeps the lock in h.
func (l *Locks) Record(ctx context.Context, h History, job, worker string) error {
	_, err := h.Record(ctx, job, worker)
	return err
}
