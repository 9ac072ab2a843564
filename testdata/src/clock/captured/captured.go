//leaseguard:lease

// Package captured builds its SQL arguments in function literals that
// store into the variables they capture, as maintenance services that
// batch their writes do.
package captured

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// Driver runs the service's batch statements; the implementation is not
// in this package.
//
//leaseguard:sql
type Driver interface { // want Driver:"executes SQL"
	RescueMany(ctx context.Context, p *rescueParams) error
	UpsertMany(ctx context.Context, p *upsertMany) error
}

var driver Driver

type rescueParams struct {
	ID          []int64
	FinalizedAt []*time.Time
}

type upsert struct {
	ID        string
	UpdatedAt time.Time
}

type upsertMany struct {
	Jobs []*upsert
}

const (
	upsertJobs  = `INSERT INTO periodic_jobs (id, updated_at) SELECT * FROM unnest($1::text[], $2::timestamptz[]) ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at`
	reapPeriods = `DELETE FROM periodic_jobs WHERE updated_at < now() - interval '1 day'`
)

// A literal appends its parameter to a field of the captured struct; the
// caller passes it the clock.
func rescueStuck(ctx context.Context, ids []int64) error {
	now := time.Now().UTC() // want `time.Now flows into an argument of captured.Driver.RescueMany, which executes SQL`
	params := rescueParams{}
	add := func(id int64, finalizedAt *time.Time) {
		params.ID = append(params.ID, id)
		params.FinalizedAt = append(params.FinalizedAt, finalizedAt)
	}
	for _, id := range ids {
		add(id, &now)
	}
	return driver.RescueMany(ctx, &params)
}

func reap(ctx context.Context) error {
	_, err := pool.Exec(ctx, reapPeriods)
	return err
}

// A literal called where it is written appends structs stamped with the
// clock to a field of the struct that a captured pointer points to.
func keepAlive(ctx context.Context, ids []string) error {
	params := &upsertMany{}
	func() {
		for _, id := range ids {
			params.Jobs = append(params.Jobs, &upsert{ID: id, UpdatedAt: time.Now()}) // want `time.Now flows into an argument of captured.Driver.UpsertMany, which executes SQL`
		}
	}()
	return driver.UpsertMany(ctx, params)
}

// What a literal stores into a variable it captures is what the variable
// holds after the call.
func collect(ctx context.Context, ids []string) error {
	var at []time.Time
	stamp := func() {
		for range ids {
			at = append(at, time.Now()) // want `time.Now flows into an argument of Exec`
		}
	}
	stamp()
	_, err := pool.Exec(ctx, upsertJobs, ids, at)
	return err
}

// A literal that stores nothing of the clock leaves the variable clean.
func collectIDs(ctx context.Context, ids []string) error {
	var out []string
	func() {
		for _, id := range ids {
			out = append(out, id)
		}
		_ = time.Now() // ok: stored nowhere
	}()
	_, err := pool.Exec(ctx, upsertJobs, out, []time.Time{})
	return err
}

// A function literal that returns a read inside a struct: the read is
// where the clock is (a literal has no name of its own).
func literalReturn(ctx context.Context) error {
	type stamped struct {
		ID        string
		UpdatedAt time.Time
	}
	mk := func(id string) *stamped {
		return &stamped{ID: id, UpdatedAt: time.Now()} // want `time.Now flows into an argument of Exec`
	}
	u := mk("a")
	_, err := pool.Exec(ctx, upsertJobs, []string{u.ID}, []time.Time{u.UpdatedAt})
	return err
}
