//leaseguard:lease

// Package claims claims job rows whose lock has lapsed by choosing them in
// a subquery or a common table expression, FOR UPDATE SKIP LOCKED: the
// lapse test there is the claim's own.
package claims

import (
	"context"
	"database/sql"
	"errors"
)

func claimSub(ctx context.Context, db *sql.DB, worker string, now any) error { // want claimSub:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' WHERE id = (SELECT id FROM jobs WHERE locked_until < $2 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)`, worker, now) // want `UPDATE of jobs tests locked_until against \$2, a time the process chose`
	return check(res, err)
}

func claimIn(ctx context.Context, db *sql.DB, worker string, now any) error { // want claimIn:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' WHERE id IN (SELECT j.id FROM jobs j WHERE j.locked_until < $2 LIMIT 10 FOR UPDATE SKIP LOCKED)`, worker, now) // want `UPDATE of jobs tests locked_until against \$2, a time the process chose`
	return check(res, err)
}

func claimCTE(ctx context.Context, db *sql.DB, worker string, now any) error { // want claimCTE:"renews a lease"
	res, err := db.ExecContext(ctx, `WITH c AS (SELECT id FROM jobs WHERE locked_until < $2 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' FROM c WHERE jobs.id = c.id`, worker, now) // want `UPDATE of jobs tests locked_until against \$2, a time the process chose`
	return check(res, err)
}

// The database clock decides: nothing to report.
func claimDB(ctx context.Context, db *sql.DB, worker string) error { // want claimDB:"renews a lease"
	res, err := db.ExecContext(ctx, `WITH c AS (SELECT id FROM jobs WHERE locked_until < clock_timestamp() ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' FROM c WHERE jobs.id = c.id`, worker)
	return check(res, err)
}

// A claim that reads what another table says of the holder, and judges
// the lapse itself only where that table has no row for it.
func claimJoined(ctx context.Context, db *sql.DB, worker string, topics []string, cutoff any) error { // want claimJoined:"renews a lease"
	res, err := db.ExecContext(ctx, `WITH c AS (SELECT j.id FROM jobs j LEFT JOIN sessions s ON s.worker = j.locked_by WHERE j.queue = ANY($2) AND COALESCE(s.expires_at < clock_timestamp(), j.locked_until < $3) FOR UPDATE OF j SKIP LOCKED) UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' FROM c WHERE jobs.id = c.id`, worker, topics, cutoff) // want `UPDATE of jobs tests locked_until against \$3, a time the process chose`
	return check(res, err)
}

// The same with the database clock in both arms: nothing to report.
func claimJoinedDB(ctx context.Context, db *sql.DB, worker string, topics []string) error { // want claimJoinedDB:"renews a lease"
	res, err := db.ExecContext(ctx, `WITH c AS (SELECT j.id FROM jobs j LEFT JOIN sessions s ON s.worker = j.locked_by WHERE j.queue = ANY($2) AND COALESCE(s.expires_at < clock_timestamp(), j.locked_until < clock_timestamp(), false) FOR UPDATE OF j SKIP LOCKED) UPDATE jobs SET locked_by = $1, locked_until = clock_timestamp() + interval '30 seconds' FROM c WHERE jobs.id = c.id`, worker, topics)
	return check(res, err)
}

func renew(ctx context.Context, db *sql.DB, id int64, worker string) error { // want renew:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE jobs SET locked_until = clock_timestamp() + interval '30 seconds' WHERE id = $1 AND locked_by = $2 AND locked_until > clock_timestamp()`, id, worker)
	return check(res, err)
}

// A renewal whose lapse test is in a COALESCE: a row without an expiry
// (NULL) is not renewed.
func renewCoalesce(ctx context.Context, db *sql.DB, id int64, worker string) error { // want renewCoalesce:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE jobs SET locked_until = clock_timestamp() + interval '30 seconds' WHERE id = $1 AND locked_by = $2 AND COALESCE(locked_until > clock_timestamp(), false)`, id, worker)
	return check(res, err)
}

func check(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errors.New("lost")
	}
	return nil
}
