//leaseguard:lease

// Package lease has statements on the lease table itself: renewals and
// acquisitions must set and test expiry with the database clock, and lease
// rows are never deleted.
package lease

import (
	"context"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// done checks that a renewal or takeover found its row.
func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost lease; refuse all writes")
	}
}

const renewParamSQL = `UPDATE worker_leases
   SET expires_at = $4
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()`

func renewWithProcessExpiry(ctx context.Context, at time.Time) {
	done(pool.Exec(ctx, renewParamSQL, "a", "h", 1, at)) // want `UPDATE of worker_leases sets expires_at from \$4, a time the process chose: compute it from clock_timestamp\(\)`
}

const renewTestParamSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + interval '15 seconds'
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > $4`

func renewTestedByProcess(ctx context.Context, now time.Time) {
	done(pool.Exec(ctx, renewTestParamSQL, "a", "h", 1, now)) // want `UPDATE of worker_leases tests expires_at against \$4, a time the process chose: compare it with clock_timestamp\(\)`
}

const renewUntestedSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + interval '15 seconds'
 WHERE name = $1 AND holder = $2 AND epoch = $3`

func renewUntested(ctx context.Context) {
	done(pool.Exec(ctx, renewUntestedSQL, "a", "h", 1)) // want `renewal does not test expires_at > clock_timestamp\(\): it revives a lease that has expired`
}

const takeoverParamSQL = `UPDATE worker_leases
   SET holder = $2, epoch = epoch + 1, expires_at = clock_timestamp() + interval '15 seconds'
 WHERE name = $1 AND expires_at <= $3`

func takeoverByProcessClock(ctx context.Context, now time.Time) {
	done(pool.Exec(ctx, takeoverParamSQL, "a", "h", now)) // want `UPDATE of worker_leases tests expires_at against \$3, a time the process chose`
}

func acquireWithProcessExpiry(ctx context.Context, at time.Time) {
	done(pool.Exec(ctx, `INSERT INTO worker_leases (name, holder, epoch, expires_at) VALUES ($1, $2, 1, $3) ON CONFLICT (name) DO NOTHING`, "a", "h", at)) // want `INSERT into worker_leases sets expires_at from \$3, a time the process chose`
}

// A takeover that computes the next epoch in Go tests the one it replaces:
// a lease operation, whose expiry is judged.
const takeoverInGoSQL = `UPDATE worker_leases
   SET holder = $2, epoch = $3, expires_at = $4
 WHERE name = $1 AND epoch = $5 AND expires_at <= clock_timestamp()`

func takeoverComputedInGo(ctx context.Context, at time.Time) {
	done(pool.Exec(ctx, takeoverInGoSQL, "a", "h", 2, at, 1)) // want `UPDATE of worker_leases sets expires_at from \$4, a time the process chose`
}

// A row written with the epoch as the caller gave it, replacing one the
// statement does not test, is a copy (a test fixture, an import, a
// restore): no acquisition, renewal or takeover, and its expiry is not
// judged.
const copyRowSQL = `INSERT INTO worker_leases (name, holder, epoch, expires_at) VALUES ($1, $2, coalesce($3::bigint, 0), $4)`

const copyOverSQL = `UPDATE worker_leases
   SET holder = CASE WHEN $1::boolean THEN $2 ELSE holder END,
       epoch = CASE WHEN $3::boolean THEN $4 ELSE epoch END,
       expires_at = CASE WHEN $5::boolean THEN $6 ELSE expires_at END
 WHERE name = $7`

// A row inserted with no holder and no conflict to settle is nobody's
// lease yet (a queued message that becomes visible at expires_at): no
// acquisition, whatever sets its expiry.
func enqueue(ctx context.Context, at time.Time) {
	_, _ = pool.Exec(ctx, `INSERT INTO worker_leases (name, expires_at) VALUES ($1, $2)`, "a", at)
}

func copyRow(ctx context.Context, at time.Time) {
	_, _ = pool.Exec(ctx, copyRowSQL, "a", "h", 7, at)
	_, _ = pool.Exec(ctx, copyOverSQL, true, "h", true, 7, true, at, "a")
}

const upsertSQL = `INSERT INTO worker_leases (name, holder, epoch, expires_at)
VALUES ($1, $2, 1, clock_timestamp() + interval '15 seconds')
ON CONFLICT (name) DO UPDATE SET expires_at = $3`

func upsertWithProcessExpiry(ctx context.Context, at time.Time) {
	_, _ = pool.Exec(ctx, upsertSQL, "a", "h", at) // want `INSERT into worker_leases sets expires_at from \$3`
}

func releaseByDelete(ctx context.Context) {
	_, _ = pool.Exec(ctx, `DELETE FROM worker_leases WHERE name = $1 AND holder = $2`, "a", "h") // want `DELETE from worker_leases restarts the epoch and reuses fencing tokens: release by expiring the row instead`
}

func truncate(ctx context.Context) {
	_, _ = pool.Exec(ctx, `TRUNCATE worker_leases`) // want `TRUNCATE of worker_leases restarts the epoch and reuses fencing tokens`
}

// ok: the reference package's statements.
const (
	takeoverSQL = `UPDATE worker_leases
   SET holder = $2, epoch = epoch + 1,
       expires_at = clock_timestamp() + $3::bigint * interval '1 millisecond'
 WHERE name = $1 AND expires_at <= clock_timestamp()
RETURNING epoch`
	firstSQL = `INSERT INTO worker_leases (name, holder, epoch, expires_at)
VALUES ($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 millisecond')
ON CONFLICT (name) DO NOTHING
RETURNING epoch`
	renewSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()
RETURNING epoch`
	releaseSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp()
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()`
	upsertExcludedSQL = `INSERT INTO worker_leases (name, holder, epoch, expires_at)
VALUES ($1, $2, 1, clock_timestamp() + interval '15 seconds')
ON CONFLICT (name) DO UPDATE SET expires_at = EXCLUDED.expires_at`
)

func reference(ctx context.Context) {
	var epoch int64
	_ = pool.QueryRow(ctx, takeoverSQL, "a", "h", 15000).Scan(&epoch)
	_ = pool.QueryRow(ctx, firstSQL, "a", "h", 15000).Scan(&epoch)
	_ = pool.QueryRow(ctx, renewSQL, "a", "h", 1, 15000).Scan(&epoch)
	_, _ = pool.Exec(ctx, releaseSQL, "a", "h", 1)
	_, _ = pool.Exec(ctx, upsertExcludedSQL, "a", "h")
}

// ok: releases end the lease; they are not renewals, and need no test of
// expiry.
const (
	releaseNullSQL     = `UPDATE worker_leases SET expires_at = NULL WHERE name = $1 AND holder = $2`
	releaseInfinitySQL = `UPDATE worker_leases SET expires_at = '-infinity' WHERE name = $1 AND holder = $2`
	releaseHolderSQL   = `UPDATE worker_leases SET holder = NULL, expires_at = now() WHERE name = $1 AND holder = $2`
)

func releases(ctx context.Context) {
	_, _ = pool.Exec(ctx, releaseNullSQL, "a", "h")
	_, _ = pool.Exec(ctx, releaseInfinitySQL, "a", "h")
	_, _ = pool.Exec(ctx, releaseHolderSQL, "a", "h")
}

// A renewal whose result is dropped never learns that it lost the lease.
func renewDiscarded(ctx context.Context) error { // want renewDiscarded:"renews a lease"
	_, err := pool.Exec(ctx, renewSQL, "a", "h", 1, 15000) // want `the result of this renewal is discarded: a renewal or takeover that matches no row returns no error, so the holder never learns it lost the lease; compare RowsAffected`
	return err
}

// Printing the command tag is not checking it.
func renewLogged(ctx context.Context) {
	tag, err := pool.Exec(ctx, renewSQL, "a", "h", 1, 15000) // want `the rows affected by this renewal are never compared` `the failure of this renewal is only logged`
	log.Printf("renewed: %v %v", tag, err)
}

// A write in a WITH is a write: a data-modifying CTE that deletes the lease
// row restarts the epoch as a plain DELETE does.
func deleteInCTE(ctx context.Context) {
	_, _ = pool.Exec(ctx, `WITH d AS (DELETE FROM worker_leases WHERE name = $1 RETURNING name) SELECT pg_notify('lease', name) FROM d`, "a") // want `DELETE from worker_leases restarts the epoch`
}

// So is a MERGE arm.
const mergeDeleteSQL = `MERGE INTO worker_leases l USING (SELECT $1::text AS name) s ON l.name = s.name
WHEN MATCHED THEN DELETE`

func deleteInMerge(ctx context.Context) {
	_, _ = pool.Exec(ctx, mergeDeleteSQL, "a") // want `MERGE … DELETE from worker_leases restarts the epoch`
}

// An acquisition whose renewal arm, matching the holder's own row, never
// tests expiry: the holder revives its own lapsed lease under the old
// epoch, and its stale writes pass again.
const upsertRenewArmSQL = `INSERT INTO worker_leases AS l (name, holder, epoch, expires_at)
VALUES ($1, $2, 1, clock_timestamp() + interval '15 seconds')
ON CONFLICT (name) DO UPDATE SET holder = $2, expires_at = clock_timestamp() + interval '15 seconds'
 WHERE l.expires_at < clock_timestamp() OR l.holder = $2`

func upsertRenewArm(ctx context.Context) {
	done(pool.Exec(ctx, upsertRenewArmSQL, "a", "h")) // want `renewal does not test expires_at > clock_timestamp\(\)`
}

// ok: the same with each arm right.
const upsertArmsSQL = `INSERT INTO worker_leases AS l (name, holder, epoch, expires_at)
VALUES ($1, $2, 1, clock_timestamp() + interval '15 seconds')
ON CONFLICT (name) DO UPDATE SET holder = $2, epoch = l.epoch + 1, expires_at = clock_timestamp() + interval '15 seconds'
 WHERE l.expires_at < clock_timestamp() OR (l.holder = $2 AND l.expires_at > clock_timestamp())`

func upsertArms(ctx context.Context) {
	done(pool.Exec(ctx, upsertArmsSQL, "a", "h"))
}

// ok: a release that keeps the expiry of a row the caller does not hold
// and clears it where it does: a CASE's condition chooses, it sets no time.
const releaseCaseSQL = `UPDATE worker_leases SET expires_at = CASE WHEN holder = $2 THEN NULL ELSE expires_at END WHERE name = $1`

func releaseCase(ctx context.Context) {
	done(pool.Exec(ctx, releaseCaseSQL, "a", "h"))
}

// A CASE whose result is a time the process chose is judged as that time.
const renewCaseSQL = `UPDATE worker_leases SET expires_at = CASE WHEN holder = $2 THEN $3 ELSE expires_at END WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()`

func renewCase(ctx context.Context, at time.Time) {
	done(pool.Exec(ctx, renewCaseSQL, "a", "h", at)) // want `UPDATE of worker_leases sets expires_at from \$3, a time the process chose`
}
