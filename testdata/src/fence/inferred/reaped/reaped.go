//leaseguard:lease

// Package reaped locks the jobs that a worker dequeues with a row each in
// job_lock, heartbeats the rows while the jobs run, and reaps the rows
// whose heartbeat lapsed, freeing their jobs for another worker. The
// table has no holder and no epoch: the reaping, a DELETE of the lapsed
// rows whose RETURNING another write of the statement reads, shows that
// triggered_at is a lease's heartbeat, without settings.
package reaped

import (
	"context"
	"database/sql"
	"errors"
)

var db *sql.DB

// ok: the lock is taken with the job, by the database clock.
func Dequeue(ctx context.Context, job int64) error {
	_, err := db.ExecContext(ctx, `INSERT INTO job_lock (job_id, lock_id, triggered_at)
 SELECT id, lock_id, NOW() AT TIME ZONE 'UTC' FROM jobs WHERE id = $1`, job)
	return err
}

// Heartbeat renews the locks of the jobs the caller names, whether or not
// they lapsed: a job reaped and dequeued again by another worker gets its
// lock renewed by the first.
func Heartbeat(ctx context.Context, jobs []int64, locks []string) error { // want Heartbeat:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE job_lock SET triggered_at = NOW() AT TIME ZONE 'UTC' WHERE (job_id, lock_id) IN (SELECT UNNEST($1::BIGINT[]), UNNEST($2::TEXT[]))`, jobs, locks) // want `renewal does not test triggered_at > clock_timestamp\(\) minus the lease's interval`
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(jobs)) {
		return errors.New("a job lock was lost")
	}
	return nil
}

// ok: the renewal tests that the lock has not lapsed.
func HeartbeatChecked(ctx context.Context, jobs []int64, locks []string) error { // want HeartbeatChecked:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE job_lock SET triggered_at = NOW() AT TIME ZONE 'UTC'
 WHERE (job_id, lock_id) IN (SELECT UNNEST($1::BIGINT[]), UNNEST($2::TEXT[]))
 AND triggered_at > NOW() AT TIME ZONE 'UTC' - INTERVAL '1 minute'`, jobs, locks)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(jobs)) {
		return errors.New("a job lock was lost")
	}
	return nil
}

// ok: the reaping, by the database clock.
func Reap(ctx context.Context, staleMillis int64) error {
	_, err := db.ExecContext(ctx, `WITH stale AS (
 DELETE FROM job_lock WHERE triggered_at < NOW() AT TIME ZONE 'UTC' - INTERVAL '1 MILLISECOND' * $1
 RETURNING job_id, lock_id)
 UPDATE jobs SET state = 'failed' FROM stale WHERE stale.job_id = jobs.id`, staleMillis)
	return err
}
