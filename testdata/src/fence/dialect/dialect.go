//leaseguard:lease

// Package dialect sends MySQL's SQL: one note says so, not a PostgreSQL
// syntax error at each statement.
package dialect

import (
	"context"
	"database/sql"
)

var db *sql.DB

func renew(ctx context.Context) {
	_, _ = db.ExecContext(ctx, "UPDATE `leases` SET expires_at = NOW(6) WHERE name = ?", "a") // want `SQL is not PostgreSQL \(backquoted names\): the fence rule reads PostgreSQL only`
	_, _ = db.ExecContext(ctx, "UPDATE leases SET owner = ? WHERE name = ?", "h", "a")
}
