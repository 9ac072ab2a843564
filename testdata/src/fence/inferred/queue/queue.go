//leaseguard:lease

// Package queue leases a message to a receiver until its visibility
// timeout, as SQS does: no holder, no token, only the timeout that a
// receive pushes forward on the messages whose timeout has passed. The
// rule reads that shape from the SQL, without settings.
package queue

import (
	"context"
	"database/sql"
	"time"
)

var db *sql.DB

const receiveSQL = `UPDATE messages SET timeout = $1, received = received + 1
 WHERE id = (SELECT id FROM messages WHERE queue = $2 AND $3 >= timeout ORDER BY created LIMIT 1)
 RETURNING id`

// Receive takes a message whose timeout has passed, with the process's
// clock deciding which and until when.
func Receive(ctx context.Context, timeout time.Duration) (string, error) { // want Receive:"renews a lease"
	now := time.Now()
	var id string
	err := db.QueryRowContext(ctx, receiveSQL, now.Add(timeout), "q", now).Scan(&id) // want `UPDATE of messages sets timeout from \$1, a time the process chose` `UPDATE of messages tests timeout against \$3, a time the process chose`
	return id, err
}

// ok: a receive whose database decides.
func ReceiveDB(ctx context.Context, seconds int) (string, error) { // want ReceiveDB:"renews a lease"
	var id string
	err := db.QueryRowContext(ctx, `UPDATE messages SET timeout = clock_timestamp() + $1 * interval '1 second'
 WHERE id = (SELECT id FROM messages WHERE queue = $2 AND timeout <= clock_timestamp() ORDER BY created LIMIT 1 FOR UPDATE SKIP LOCKED)
 RETURNING id`, seconds, "q").Scan(&id)
	return id, err
}

// ok: sending a message no one holds: its first timeout is when it may be
// received, not a lease.
func Send(ctx context.Context, body string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO messages (queue, body, timeout) VALUES ($1, $2, clock_timestamp())`, "q", body)
	return err
}
