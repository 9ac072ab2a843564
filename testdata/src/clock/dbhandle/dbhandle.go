//leaseguard:lease

// Package dbhandle writes through interfaces that no setting names: those
// that are database handles by their own methods count as SQL.
package dbhandle

import (
	"context"
	"time"

	"example.com/dbhandle"
)

func reelect(ctx context.Context, ex dbhandle.Executor) (bool, error) {
	return ex.LeaderAttemptReelect(ctx, &dbhandle.Params{Name: "n", Now: time.Now()}) // want `time.Now flows into an argument of dbhandle.Executor.LeaderAttemptReelect, which executes SQL`
}

func members(ctx context.Context, r dbhandle.Repo, ttl time.Duration) error {
	if _, err := r.Members(ctx, time.Now().Add(-ttl)); err != nil { // want `time.Now flows into an argument of dbhandle.Repo.Members, which executes SQL`
		return err
	}
	_, err := r.UpsertMember(ctx, &dbhandle.Member{Host: "h", Expiry: time.Now().Add(ttl)}) // want `time.Now flows into an argument of dbhandle.Repo.UpsertMember, which executes SQL`
	return err
}

// ok: the executor's own clock is a clock read, not SQL; here it decides
// nothing.
func executorClock(ex dbhandle.Executor) time.Time {
	return ex.Now()
}

// ok: nothing says that a database is behind Backend (name it with
// -clock.sql-interfaces).
func expire(ctx context.Context, b dbhandle.Backend, expiredAt time.Time) error {
	if time.Until(expiredAt) > 0 {
		return nil
	}
	return b.Delete(ctx, "k", 1)
}

func heartbeat(ctx context.Context, q dbhandle.Queries) error {
	return q.UpdateTimestamp(ctx, "controller", time.Now()) // want `time.Now flows into an argument of dbhandle.Queries.UpdateTimestamp, which executes SQL`
}

func upsertPeriodic(ctx context.Context, p dbhandle.Pilot, tx dbhandle.Executor) error {
	return p.PeriodicJobUpsert(ctx, tx, &dbhandle.Params{Name: "n", Now: time.Now()}) // want `time.Now flows into an argument of dbhandle.Pilot.PeriodicJobUpsert, which executes SQL`
}

// ok: a Backend is no database handle, so neither is what takes one.
func notify(ctx context.Context, n dbhandle.Notifier, b dbhandle.Backend) error {
	return n.Notify(ctx, b, time.Now())
}
