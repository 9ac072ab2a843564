//leaseguard:lease

// Package upsert acquires and extends many leases in one statement, as a
// scheduler leases the queues it serves: an INSERT … ON CONFLICT that
// takes the rows whose lease has passed and extends the ones the caller
// names by id. The rule reads the expiry from EXCLUDED, the value that the
// INSERT proposed.
package upsert

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const acquireOrExtend = `INSERT INTO leases (expires_at, kind, resource_id) SELECT now() + interval '30 seconds', $1, r FROM unnest($2::text[]) AS r ON CONFLICT (kind, resource_id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE leases.expires_at < now() OR leases.id = ANY($3::bigint[]) RETURNING id`

// AcquireOrExtend extends the leases whose ids the caller passes even
// when they have lapsed and another scheduler took them over.
func AcquireOrExtend(ctx context.Context, kind string, resources []string, held []int64) error { // want AcquireOrExtend:"renews a lease"
	rows, err := pool.Query(ctx, acquireOrExtend, kind, resources, held) // want `renewal does not test expires_at > clock_timestamp\(\)`
	if err != nil {
		return err
	}
	rows.Close()
	return nil
}

// ok: the extension arm tests that the lease it extends has not passed.
func AcquireOrExtendChecked(ctx context.Context, kind string, resources []string, held []int64) error { // want AcquireOrExtendChecked:"renews a lease"
	rows, err := pool.Query(ctx, `INSERT INTO leases (expires_at, kind, resource_id)
 SELECT now() + interval '30 seconds', $1, r FROM unnest($2::text[]) AS r
 ON CONFLICT (kind, resource_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
 WHERE leases.expires_at < now() OR (leases.id = ANY($3::bigint[]) AND leases.expires_at > now())
 RETURNING id`, kind, resources, held)
	if err != nil {
		return err
	}
	rows.Close()
	return nil
}

// ok: a release.
func Release(ctx context.Context, ids []int64) error {
	_, err := pool.Exec(ctx, `DELETE FROM leases WHERE id = ANY($1::bigint[])`, ids)
	return err
}
