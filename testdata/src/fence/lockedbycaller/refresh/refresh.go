//leaseguard:lease

// Package refresh holds per-topic maintenance leases in the shape of
// sqlc's generated queries: each function runs on the handle it is given.
// A caller locks the lease row (SelectForUpdate), checks its holder and
// age in Go, and then takes or refreshes it in the same transaction, so
// the refresh matches the row it locked: its rows affected tell nothing.
package refresh

import (
	"context"
	"database/sql"
	"time"
)

// DBTX is a pool or a transaction.
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Claim takes the leases whose holder stopped refreshing them.
func Claim(ctx context.Context, db DBTX, holder, topic string) (bool, error) { // want Claim:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE maintenance_leases SET holder_id = $1, acquired_at = now() WHERE topic = $2 AND acquired_at < now() - interval '5 minutes'`, holder, topic)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ClaimStale takes the leases older than a cutoff that the process chose.
func ClaimStale(ctx context.Context, db DBTX, holder, topic string, cutoff time.Time) (bool, error) {
	res, err := db.ExecContext(ctx, `UPDATE maintenance_leases SET holder_id = $1, acquired_at = now() WHERE topic = $2 AND acquired_at < $3`, holder, topic, cutoff) // want `UPDATE of maintenance_leases tests acquired_at against \$3, a time the process chose: compare it with clock_timestamp\(\) minus the lease's interval`
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SelectForUpdate locks the lease row for the caller's transaction, and
// says whether its holder's session has lapsed.
func SelectForUpdate(ctx context.Context, db DBTX, topic string) (holder string, lapsed bool, err error) {
	err = db.QueryRowContext(ctx, `SELECT l.holder_id, COALESCE(s.expires_at < now(), true) FROM maintenance_leases l LEFT JOIN sessions s ON s.consumer_id = l.holder_id WHERE l.topic = $1 FOR UPDATE OF l`, topic).Scan(&holder, &lapsed)
	return holder, lapsed, err
}

// Refresh runs after SelectForUpdate, in the same transaction.
func Refresh(ctx context.Context, db DBTX, topic, holder string) error { // want Refresh:"renews a lease"
	_, err := db.ExecContext(ctx, `UPDATE maintenance_leases SET holder_id = $2, acquired_at = now() WHERE topic = $1`, topic, holder)
	return err
}

// Touch renews the holder's lease. A caller may have read the row under
// lock first, but whether it judged the lapse there is not known: the
// renewal is still asked to test it.
func Touch(ctx context.Context, db DBTX, topic, holder string) (bool, error) { // want Touch:"renews a lease"
	res, err := db.ExecContext(ctx, `UPDATE maintenance_leases SET acquired_at = now() WHERE topic = $1 AND holder_id = $2`, topic, holder) // want `renewal does not test acquired_at > clock_timestamp\(\) minus the lease's interval`
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release gives the lease up.
func Release(ctx context.Context, db DBTX, topic, holder string) error {
	_, err := db.ExecContext(ctx, `DELETE FROM maintenance_leases WHERE topic = $1 AND holder_id = $2`, topic, holder)
	return err
}
