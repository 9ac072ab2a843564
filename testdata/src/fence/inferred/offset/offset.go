//leaseguard:lease

// Package offset copies a partition under a lease on the job's row: the
// process that holds the row's lease moves its offset and, at the end,
// marks the job completed. The rule reads the lease from the upsert (its
// holder lease_process_id, its expiry lease_expires_at); the holder's
// other writes to the row must test that it still holds it.
package offset

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// ok: the acquisition or extension, by the database clock; its RETURNING
// row says whether the lease was had.
func Acquire(ctx context.Context, key, process string) (bool, error) { // want Acquire:"renews a lease"
	var completed bool
	err := pool.QueryRow(ctx, `INSERT INTO job_offsets (key, lease_process_id, lease_expires_at) VALUES ($1, $2, clock_timestamp() + interval '1 minute')
 ON CONFLICT (key) DO UPDATE SET lease_process_id = EXCLUDED.lease_process_id, lease_expires_at = EXCLUDED.lease_expires_at
 WHERE job_offsets.lease_expires_at < clock_timestamp() OR job_offsets.lease_process_id = $2 AND job_offsets.lease_expires_at > clock_timestamp()
 RETURNING is_completed`, key, process).Scan(&completed)
	return completed, err
}

// MarkCompleted names the row by its key alone: a process whose lease
// lapsed and was taken marks the new holder's job completed.
func MarkCompleted(ctx context.Context, key string) error {
	_, err := pool.Exec(ctx, `UPDATE job_offsets SET is_completed = TRUE WHERE key = $1`, key) // want `UPDATE of job_offsets writes the lease row it names without testing lease_process_id or lease_expires_at > clock_timestamp\(\)`
	return err
}

// ok: the holder's write tests that it still holds the lease, and counts
// the row.
func MarkCompletedHeld(ctx context.Context, key, process string) (bool, error) {
	tag, err := pool.Exec(ctx, `UPDATE job_offsets SET is_completed = TRUE
 WHERE key = $1 AND lease_process_id = $2 AND lease_expires_at > clock_timestamp()`, key, process)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// ok: a write of every row, not of one the caller names: maintenance.
func Reset(ctx context.Context) error {
	_, err := pool.Exec(ctx, `UPDATE job_offsets SET is_completed = FALSE WHERE is_completed`)
	return err
}
