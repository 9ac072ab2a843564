package lease

import (
	"context"
	"database/sql"
	"time"
)

// Renew extends the lease, with the process clock deciding when it expires.
func Renew(ctx context.Context, db *sql.DB, name, holder string, ttl time.Duration) error {
	_, err := db.ExecContext(ctx,
		`UPDATE worker_leases SET expires_at = $3 WHERE name = $1 AND holder = $2`,
		name, holder, time.Now().Add(ttl))
	return err
}

// Write writes an order under the holder's epoch unless the lease, by this
// process's clock, expired.
func Write(ctx context.Context, db *sql.DB, expires time.Time, epoch int64, order string) error {
	if time.Now().After(expires) {
		return ErrLost
	}
	_, err := db.ExecContext(ctx, `INSERT INTO orders (epoch, body) VALUES ($1, $2)`, epoch, order)
	return err
}
