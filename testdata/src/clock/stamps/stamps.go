//leaseguard:lease

// Package stamps writes the process clock into rows: a stamp in a table
// whose times nothing in the package judges decides nothing; a time in a
// table whose rows some statement chooses by time, or in a lease column,
// decides which rows are chosen.
package stamps

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const (
	// schema_version: written, read by equality, never compared by order.
	writeVersion = `INSERT INTO schema_version (db_name, creation_time, version) VALUES ($1, $2, $3)
		ON CONFLICT (db_name) DO UPDATE SET creation_time = excluded.creation_time, version = excluded.version`
	readVersion = `SELECT version FROM schema_version WHERE db_name = $1`

	// jobs: claimed by run_at, so the time a job is written with decides
	// when it is claimed.
	enqueue = `INSERT INTO jobs (id, run_at) VALUES ($1, $2)`
	claim   = `SELECT j.id FROM jobs AS j WHERE j.run_at <= now() ORDER BY j.id LIMIT 1 FOR UPDATE SKIP LOCKED`

	// history: rows chosen by BETWEEN.
	logEvent = `INSERT INTO history (at, what) VALUES ($1, $2)`
	window   = `SELECT what FROM history WHERE at BETWEEN $1::timestamptz - interval '1 hour' AND $1`
)

func stampVersion(ctx context.Context, v string) error {
	_, err := pool.Exec(ctx, writeVersion, "main", time.Now(), v) // ok: a stamp nothing judges
	return err
}

func version(ctx context.Context) (string, error) {
	var v string
	err := pool.QueryRow(ctx, readVersion, "main").Scan(&v)
	return v, err
}

// exec is the package's wrapper: the texts it is given are known at
// each call.
func exec(ctx context.Context, sql string, args ...any) error {
	_, err := pool.Exec(ctx, sql, args...)
	return err
}

func stampThroughWrapper(ctx context.Context) error {
	return exec(ctx, writeVersion, "main", time.Now(), "2") // ok: a stamp nothing judges
}

func enqueueJob(ctx context.Context) error {
	_, err := pool.Exec(ctx, enqueue, 1, time.Now()) // want `time.Now flows into an argument of Exec`
	return err
}

func enqueueThroughWrapper(ctx context.Context) error {
	return exec(ctx, enqueue, 2, time.Now().Add(time.Minute)) // want `time.Now flows into an argument of stamps.exec, which passes it to SQL`
}

func claimJob(ctx context.Context) (int, error) {
	var id int
	err := pool.QueryRow(ctx, claim).Scan(&id)
	return id, err
}

func record(ctx context.Context, what string) error {
	_, err := pool.Exec(ctx, logEvent, time.Now(), what) // want `time.Now flows into an argument of Exec`
	return err
}

func recent(ctx context.Context) error {
	_, err := pool.Exec(ctx, window, time.Now()) // want `time.Now flows into an argument of Exec`
	return err
}

// A lease column is evidence whatever the table: the holder's expiry.
func renewMembership(ctx context.Context) error {
	_, err := pool.Exec(ctx, `UPDATE members SET expires_at = $2 WHERE id = $1`, 1, time.Now().Add(time.Minute)) // want `time.Now flows into an argument of Exec`
	return err
}

// A text the package cannot read is not judged a stamp.
func unknownText(ctx context.Context, table string) error {
	_, err := pool.Exec(ctx, fmt.Sprint(table), time.Now()) // want `time.Now flows into an argument of Exec`
	return err
}

// A table named at run time is judged by the statements on the same
// expression.
func runtimeStamp(ctx context.Context, table string) error {
	_, err := pool.Exec(ctx, "INSERT INTO "+table+" (at) VALUES ($1)", time.Now()) // ok: a stamp nothing judges
	return err
}

// An INSERT that names a lease column is evidence too.
func joinMembership(ctx context.Context) error {
	_, err := pool.Exec(ctx, `INSERT INTO members (id, expires_at) VALUES ($1, $2)`, 2, time.Now().Add(time.Minute)) // want `time.Now flows into an argument of Exec`
	return err
}
