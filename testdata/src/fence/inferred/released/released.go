//leaseguard:lease

// Package released takes a storage for cleaning once its last claim has
// been idle for an interval, heartbeats the claim, and releases it by
// clearing the claim's time. The table has no holder and no epoch: the
// clearing shows that triggered_at says the row is held (a task paced to
// run at most so often never clears its time), and the rule reads the
// lease from that, without settings.
package released

import (
	"context"
	"database/sql"
	"time"
)

var db *sql.DB

// ok: a row added unheld, to be taken later: no acquisition, and no
// rows affected to compare.
func Populate(ctx context.Context, storage string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO storage_cleanups (storage) VALUES ($1) ON CONFLICT (storage) DO NOTHING`, storage)
	return err
}

// ok: the takeover of a row whose claim is idle, by the database clock;
// its RETURNING row says whether one was taken.
func Acquire(ctx context.Context) (string, error) { // want Acquire:"renews a lease"
	var storage string
	err := db.QueryRowContext(ctx, `UPDATE storage_cleanups SET triggered_at = NOW()
 WHERE storage IN (SELECT storage FROM storage_cleanups
  WHERE COALESCE(triggered_at, TO_TIMESTAMP(0)) <= NOW() - INTERVAL '1 MILLISECOND' * $1
  ORDER BY last_run NULLS FIRST LIMIT 1 FOR UPDATE SKIP LOCKED)
 RETURNING storage`, 60000).Scan(&storage)
	return storage, err
}

// Heartbeat renews the claim by the storage alone: a claim that lapsed
// and was taken by another process is renewed as its own.
func Heartbeat(ctx context.Context, storage string) error { // want Heartbeat:"renews a lease"
	_, err := db.ExecContext(ctx, `UPDATE storage_cleanups SET triggered_at = NOW() WHERE storage = $1`, storage) // want `renewal does not test triggered_at > clock_timestamp\(\) minus the lease's interval` `the result of this renewal is discarded`
	return err
}

// ok: a renewal that tests the claim has not lapsed and counts the row.
func HeartbeatChecked(ctx context.Context, storage string) (bool, error) { // want HeartbeatChecked:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE storage_cleanups SET triggered_at = NOW()
 WHERE storage = $1 AND triggered_at > NOW() - INTERVAL '1 minute'`, storage)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// HeartbeatLoop renews the claim until stop; a failed renewal ends the
// loop and tells no one, while the caller goes on cleaning.
func HeartbeatLoop(ctx context.Context, storage string, stop <-chan struct{}) {
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				res, err := db.ExecContext(ctx, renewSQL, storage) // want `the failure of this renewal is ignored`
				if err != nil {
					return
				}
				if n, _ := res.RowsAffected(); n != 1 {
					return
				}
			}
		}
	}()
}

// ok: a failed renewal is sent to the caller, which stops cleaning.
func HeartbeatLoopReported(ctx context.Context, storage string, lost chan<- error) {
	go func() {
		for range time.Tick(time.Second) {
			res, err := db.ExecContext(ctx, renewSQL, storage)
			if err != nil {
				lost <- err
				return
			}
			if n, _ := res.RowsAffected(); n != 1 {
				lost <- sql.ErrNoRows
				return
			}
		}
	}()
}

const renewSQL = `UPDATE storage_cleanups SET triggered_at = NOW() WHERE storage = $1 AND triggered_at > NOW() - INTERVAL '1 minute'`

// ok: the release clears the claim.
func Release(ctx context.Context, storage string) error {
	_, err := db.ExecContext(ctx, `UPDATE storage_cleanups SET last_run = NOW(), triggered_at = NULL WHERE storage = $1`, storage)
	return err
}
