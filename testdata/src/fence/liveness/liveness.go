//leaseguard:lease

// Package liveness keeps its locks by a liveness row: each controller
// heartbeats its row of the controller table, and a controller whose
// heartbeat is older than a timeout loses its locks, which others then
// take (the shape of Argo Workflows' database semaphores). Nothing names
// the lease table: the sweep of the locks of lapsed controllers shows it,
// the controller table, its holder (the controller) and its heartbeat
// (time).
package liveness

import (
	"context"
	"time"

	"github.com/upper/db/v4"
)

type Config struct {
	ControllerTable string
	LockTable       string
}

type Queries struct {
	session db.Session
	config  Config
}

// The heartbeat sets the time from the process clock, does not test that
// the controller is still alive, and discards its rows affected.
func (q *Queries) Heartbeat(ctx context.Context, controller string, now time.Time) error { // want Heartbeat:"renews a lease"
	_, err := q.session.SQL().Update(q.config.ControllerTable). // want `UPDATE of the table named by q.config.ControllerTable sets time from @now, a time the process chose` `renewal does not test time > clock_timestamp\(\) minus the lease's interval`
									Set("time", now).
									Where(db.Cond{"controller": controller}).
									Exec() // want `the result of this renewal is discarded`
	return err
}

// The sweep: the locks of every controller whose heartbeat is older than
// the timeout go. ok: it reads the controller table only for its
// heartbeat, which fences nothing; the time it compares comes from the
// process, which the clock rule reports.
func (q *Queries) ExpireInactiveLocks(ctx context.Context, timeout time.Duration) (int64, error) {
	since := time.Now().Add(-timeout)
	subquery := q.session.SQL().
		Select("controller").
		From(q.config.ControllerTable).
		And(db.Cond{"time <=": since})
	res, err := q.session.SQL().DeleteFrom(q.config.LockTable).
		Where(db.Cond{"controller IN": subquery}).
		Exec()
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ok: a lock taken for a controller; the lock table is not guarded, since
// no write of the package fences it.
func (q *Queries) Lock(ctx context.Context, name, controller string) error {
	_, err := q.session.SQL().InsertInto(q.config.LockTable).Columns("name", "controller").Values(name, controller).Exec()
	return err
}
