//leaseguard:lease

// Package jobs is a job queue whose rows are leases too: a worker holds its
// job until it expires, and the attempt counts up at each fetch.
package jobs

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost the job")
	}
}

const fetchSQL = `UPDATE jobs SET holder = $1, epoch = epoch + 1, expires_at = clock_timestamp() + interval '1 hour'
 WHERE id = (SELECT id FROM jobs WHERE holder IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED)`

func fetch(ctx context.Context) {
	done(pool.Exec(ctx, fetchSQL, "h"))
}

// ok: a unique job is inserted once by its unique key, with no holder: an
// insert by key, not an acquisition that brings a deleted lease back.
func enqueueUnique(ctx context.Context) {
	_, _ = pool.Exec(ctx, `INSERT INTO jobs (kind, unique_key) VALUES ($1, $2) ON CONFLICT (unique_key) DO UPDATE SET kind = EXCLUDED.kind`, "k", "u")
}

// ok: a job's row, keyed by a serial id, never comes back once deleted: no
// token can be used again.
func finish(ctx context.Context) {
	_, _ = pool.Exec(ctx, `DELETE FROM jobs WHERE id = $1`, 7)
}

// Jobs are enqueued unclaimed, and claimed by fetch: a queue.
func enqueue(ctx context.Context) {
	_, _ = pool.Exec(ctx, `INSERT INTO jobs (kind) VALUES ($1)`, "k")
}

// The worker's completion of its job: if the job was taken over meanwhile,
// the DELETE matches no row, and only its rows affected say so.
func complete(ctx context.Context) error {
	_, err := pool.Exec(ctx, `DELETE FROM jobs WHERE id = $1 AND holder = $2`, 7, "h") // want `the result of this completion is discarded: a completion whose claim was lost matches no row and returns no error, so the work is counted done while another holder may run it again; compare RowsAffected`
	return err
}

func markDone(ctx context.Context) error {
	tag, err := pool.Exec(ctx, `UPDATE jobs SET kind = 'done' WHERE id = $1 AND holder = $2`, 7, "h") // want `the rows affected by this completion are never compared`
	_ = tag.String()
	return err
}

// ok: the completion's rows affected are compared.
func completeChecked(ctx context.Context) {
	done(pool.Exec(ctx, `DELETE FROM jobs WHERE id = $1 AND holder = $2`, 7, "h"))
}

// ok: giving the job back clears the holder: a release, not a completion.
func giveBack(ctx context.Context) {
	_, _ = pool.Exec(ctx, `UPDATE jobs SET holder = NULL WHERE id = $1 AND holder = $2`, 7, "h")
}
