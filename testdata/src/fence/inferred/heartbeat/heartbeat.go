//leaseguard:lease

// Package heartbeat claims work items whose lease is a heartbeat: the
// claim and each renewal set heartbeated_at to the database clock, and a
// reaper frees the items whose heartbeat is older than an interval. The
// rule reads that shape from the SQL, without settings: setting the
// heartbeat to now() renews the lease, it does not end it.
package heartbeat

import (
	"context"
	"database/sql"
)

var db *sql.DB

// Claim takes a free item.
func Claim(ctx context.Context, worker int64) (int64, error) { // want Claim:"renews a lease"
	var id int64
	err := db.QueryRowContext(ctx, `UPDATE work_queue SET claimed_by = $1, heartbeated_at = now()
 WHERE id = (SELECT id FROM work_queue WHERE claimed_by = -1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
 RETURNING id`, worker).Scan(&id)
	return id, err
}

// Heartbeat renews the worker's claims, but never learns that one was
// freed and taken by another worker.
func Heartbeat(ctx context.Context, ids []int64, worker int64) error { // want Heartbeat:"renews a lease"
	_, err := db.ExecContext(ctx, `UPDATE work_queue SET heartbeated_at = now() WHERE id = ANY($1) AND claimed_by = $2`, ids, worker) // want `renewal does not test heartbeated_at > clock_timestamp\(\) minus the lease's interval` `the result of this renewal is discarded`
	return err
}

// ok: a renewal that tests the heartbeat has not lapsed and counts the
// rows it renewed.
func HeartbeatChecked(ctx context.Context, id, worker int64) (bool, error) { // want HeartbeatChecked:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE work_queue SET heartbeated_at = now()
 WHERE id = $1 AND claimed_by = $2 AND heartbeated_at > now() - interval '2 minutes'`, id, worker)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ok: the reaper frees the items whose heartbeat lapsed: a release.
func Cleanup(ctx context.Context) error {
	_, err := db.ExecContext(ctx, `UPDATE work_queue SET claimed_by = -1, heartbeated_at = NULL
 WHERE claimed_by <> -1 AND heartbeated_at < now() - $1::interval`, "2 minutes")
	return err
}

// Lock takes an entity's lock with a random token once its heartbeat has
// lapsed, and Renew renews it by that token.
func Lock(ctx context.Context, entity string) (string, error) { // want Lock:"renews a lease"
	var token string
	err := db.QueryRowContext(ctx, `INSERT INTO entity_lock (entity, locked_by, last_lock_time) VALUES ($1, gen_random_uuid(), now())
 ON CONFLICT (entity) DO UPDATE SET locked_by = gen_random_uuid(), last_lock_time = now()
 WHERE entity_lock.last_lock_time < now() - ($2::text || ' seconds')::interval
 RETURNING locked_by`, entity, "30").Scan(&token)
	return token, err
}

func Renew(ctx context.Context, entity, token string) error { // want Renew:"renews a lease"
	_, err := db.ExecContext(ctx, `UPDATE entity_lock SET last_lock_time = now() WHERE entity = $1 AND locked_by = $2::uuid`, entity, token) // want `renewal does not test last_lock_time > clock_timestamp\(\) minus the lease's interval` `the result of this renewal is discarded`
	return err
}
