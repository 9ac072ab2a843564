//leaseguard:lease

// Package prepared prepares its statements under names and runs them by
// name, as pgx allows: the statement run is the one prepared, and a
// finding on it points at the prepared SQL.
package prepared

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

const acquireName = "acquire lease"

func acquire(ctx context.Context, conn *pgx.Conn, holder string, until time.Time) error { // want acquire:"renews a lease"
	if _, err := conn.Prepare(ctx, acquireName, `UPDATE worker_leases SET holder = $1, epoch = epoch + 1, expires_at = $2 WHERE name = $3 AND expires_at <= clock_timestamp()`); err != nil { // want `UPDATE of worker_leases sets expires_at from \$2, a time the process chose`
		return err
	}
	tag, err := conn.Exec(ctx, acquireName, holder, until, "jobs")
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return errors.New("held")
	}
	return nil
}

// A name that the package never prepares is read as SQL, as pgx sends it.
func finish(ctx context.Context, conn *pgx.Conn, holder string) error {
	_, err := conn.Exec(ctx, "finish the lease", holder) // want `SQL does not parse`
	return err
}
