package leasepkg

import _ "embed"

// Every lease predicate below reads clock_timestamp(), the database's clock
// at the moment the predicate is evaluated. now() would be wrong: it is the
// transaction's start time, so in a transaction that has waited (behind a row
// lock, or behind the caller's own earlier statements) a lease that has since
// expired still passes expires_at > now(). The Go process's clock never
// appears here: two processes' clocks disagree, the database has one.

//go:embed schema.sql
var schemaSQL string

// Schema returns the DDL that [Manager.Migrate] runs (schema.sql): the
// lease table and the triggers that keep a lease name's epochs growing,
// for a migration of your own (goose, golang-migrate, Atlas, a DBA's
// script) in place of Migrate. It is idempotent (CREATE ... IF NOT
// EXISTS, and DO blocks that add only what is missing), and one string of
// several statements with dollar-quoted bodies: send it whole, as
// golang-migrate's PostgreSQL driver and pgx's Exec without arguments do
// (goose: between -- +goose StatementBegin and -- +goose StatementEnd). A
// database it made passes [Manager.CheckSchema], and so [Open]. Migrate
// also holds an advisory lock while it runs; a migration tool serialises
// its runs itself.
func Schema() string { return schemaSQL }

// migrateLock is the advisory lock key that serialises concurrent Migrate
// calls (CREATE TABLE IF NOT EXISTS races on the catalog otherwise).
const migrateLock = 0x6c65617365 // "lease"

// fenceTxTimeoutSQL sets transaction_timeout to $1 from now on, on
// PostgreSQL 17 and later (before, the setting does not exist, and
// current_setting(..., true) is NULL). The server arms the timeout when a
// transaction starts, from the server's, role's, database's or session's
// setting, and setting it within the transaction changes nothing while it
// is armed; so it is disarmed ('0') and armed again, unless the armed bound
// is the shorter, since it counts from the transaction's start: the fence
// never lengthens it.
const fenceTxTimeoutSQL = `CASE WHEN current_setting('transaction_timeout', true)::interval
                 NOT BETWEEN interval '1 microsecond' AND $1::text::interval
            THEN set_config('transaction_timeout', '0', true) || set_config('transaction_timeout', $1, true) END`

// fenceSQL is the fence for the caller's own writes, the first statement
// of their transaction. It reads the isolation level, which fenced
// statements need to be read committed (readCommittedName); bounds how
// long the transaction may idle (and, on PostgreSQL 17 and later, last:
// fenceTxTimeoutSQL) from now on, so that a client that stops talking
// cannot hold the lease row's lock against a takeover; and says whether
// the lease row names this holder at exactly this epoch, unexpired by the
// database's clock, locked FOR KEY SHARE until the transaction ends, so
// that every epoch change (the takeover locks the row FOR UPDATE) waits
// for it. Without the row lock the EXISTS would read the lease row from
// the statement's snapshot under READ COMMITTED, and a takeover that
// commits between that snapshot and the transaction's commit would let a
// stale write land after the new holder has started. Renewals that leave
// the epoch alone do not conflict with it.
// $1 the idle timeout, as PostgreSQL reads it ("500ms"), $2 name,
// $3 holder, $4 epoch.
const fenceSQL = `SELECT current_setting('transaction_isolation'),
       set_config('idle_in_transaction_session_timeout', $1, true),
       ` + fenceTxTimeoutSQL + `,
       EXISTS (
       SELECT 1 FROM worker_leases
        WHERE name = $2 AND holder = $3 AND epoch = $4
          AND expires_at > clock_timestamp()
          FOR KEY SHARE)`

// subtransactionSQL says whether the caller's transaction holds more than
// one transaction id: besides its own, one of a subtransaction. A fence's
// FOR KEY SHARE gives the (sub)transaction it runs in an id of its own, so
// after a fence this is true inside a savepoint, where the lock would be
// released by a rollback to it, and false at the top level. It is true as
// well after a savepoint that wrote and was released (its id stays with the
// transaction), which it cannot tell apart: the fence refuses that too.
const subtransactionSQL = `SELECT count(*) > 1 FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'transactionid'
   AND mode = 'ExclusiveLock' AND granted`

// leaderSQL reads a lease row and judges it by the database's clock: the
// holder, the epoch, the term, the expiry, whether it is unexpired, and the time left.
// $1 name.
const leaderSQL = `SELECT holder, epoch, term, expires_at,
       expires_at > clock_timestamp(),
       greatest(expires_at - clock_timestamp(), interval '0')
  FROM worker_leases WHERE name = $1`

// notifyChannel is the channel on which acquisitions and releases notify
// observers, with the lease's name as the payload.
const notifyChannel = "worker_leases"

// notifySQL tells observers that lease $1 changed hands; sent in the
// transaction that changed it, it is delivered when that commits, and only
// if it does.
const notifySQL = `SELECT pg_notify('` + notifyChannel + `', $1)`

// notifyAcquiredSQL is notifySQL for an acquisition: it notifies only if the
// transaction left lease $1 held by $2, so that a contender that found the
// lease held wakes no observer.
const notifyAcquiredSQL = `SELECT pg_notify('` + notifyChannel + `', name)
  FROM worker_leases
 WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()`

// takeoverSQL takes over an expired lease and bumps the epoch. It is a plain
// UPDATE on purpose: INSERT ... ON CONFLICT DO UPDATE would lock the row, and
// so wait behind the holder's in-flight fenced writes, even when the lease is
// valid and nothing is to be taken over. The EXISTS locks the row FOR UPDATE
// once it is found expired, a lock that conflicts with every fenced write's
// FOR KEY SHARE whatever the table's indexes are (the epoch update conflicts
// with it as well, but only while a unique index makes the epoch a key
// column): the takeover waits for in-flight writes, bounded by lock_timeout,
// and a writer that queued behind the takeover re-checks the new row and
// writes nothing. The lock is taken only on an expired row (or the caller's
// own, below), so a takeover of a valid lease returns at once.
//
// It also resumes, at a new epoch, an unexpired lease of the caller's own
// term $4: an earlier acquisition of this term whose commit was sent but
// not confirmed may have committed, and the term id, random to each
// acquisition and sent again only by the Manager that sent it, proves that
// the lease is the caller's.
// $1 name, $2 holder, $3 ttl in milliseconds, $4 term.
const takeoverSQL = `UPDATE worker_leases
   SET holder = $2,
       epoch = epoch + 1,
       expires_at = clock_timestamp() + $3::bigint * interval '1 millisecond',
       term = $4
 WHERE name = $1
   AND (expires_at <= clock_timestamp()
        OR (holder = $2 AND term = $4 AND expires_at > clock_timestamp()))
   AND EXISTS (
       SELECT 1 FROM worker_leases
        WHERE name = $1
          AND (expires_at <= clock_timestamp()
               OR (holder = $2 AND term = $4 AND expires_at > clock_timestamp()))
          FOR UPDATE)
RETURNING epoch`

// firstSQL inserts a lease row that has never existed, at epoch 1. DO NOTHING
// does not lock an existing row, so it never waits behind a holder.
// $1 name, $2 holder, $3 ttl in milliseconds, $4 term.
const firstSQL = `INSERT INTO worker_leases (name, holder, epoch, expires_at, term)
VALUES ($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 millisecond', $4)
ON CONFLICT (name) DO NOTHING
RETURNING epoch`

// holderSQL reads who holds the lease, for the message of ErrLeaseHeld only.
// $1 name.
const holderSQL = `SELECT holder, term FROM worker_leases WHERE name = $1`

// terminateBlockersSQL ends the backends that block backend $1 and are idle
// in transaction, while the lease $2 has expired by the database's clock,
// and counts them. pg_blocking_pids is empty unless $1 waits for a lock.
const terminateBlockersSQL = `SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid))
  FROM pg_stat_activity a
 WHERE a.pid = ANY (pg_blocking_pids($1::int))
   AND a.state IN ('idle in transaction', 'idle in transaction (aborted)')
   AND EXISTS (SELECT 1 FROM worker_leases
                WHERE name = $2 AND expires_at <= clock_timestamp())`

// renewTermSQL extends the lease without changing the epoch: a non-key
// update, which does not conflict with the FOR KEY SHARE of in-flight writes.
// $1 name, $2 holder, $3 epoch, $4 ttl in milliseconds.
const renewTermSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()
RETURNING epoch`

// renewBumpSQL extends the lease and bumps the epoch (PerRenewal). Like the
// takeover, it locks the row FOR UPDATE first, so that it waits for the
// in-flight writes under the old epoch whatever the indexes are, and writes
// that reach their fence afterwards are rejected. It matches the holder's
// epoch, or a later one of the same term: a bump whose outcome the holder
// could not learn (the connection failed after it was sent) may have
// committed, and only the term's own process bumps its epoch, since every
// acquisition, even by a process with the same holder id, starts a term of
// its own. A lease without a term (one made by hand) matches its epoch only.
// $1 name, $2 holder, $3 epoch, $4 ttl in milliseconds, $5 term.
const renewBumpSQL = `UPDATE worker_leases
   SET epoch = epoch + 1,
       expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
 WHERE name = $1 AND holder = $2
   AND (epoch = $3 OR (term = $5 AND $5 <> '' AND epoch > $3))
   AND expires_at > clock_timestamp()
   AND EXISTS (
       SELECT 1 FROM worker_leases
        WHERE name = $1 AND holder = $2
          AND (epoch = $3 OR (term = $5 AND $5 <> '' AND epoch > $3))
          FOR UPDATE)
RETURNING epoch`

// renewLaterSQL extends the lease without bumping under PerRenewal, when
// the bump could not get the row lock in time; like renewBumpSQL it
// matches the holder's epoch or a later one of the same term.
// $1 name, $2 holder, $3 epoch, $4 ttl in milliseconds, $5 term.
const renewLaterSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
 WHERE name = $1 AND holder = $2
   AND (epoch = $3 OR (term = $5 AND $5 <> '' AND epoch > $3))
   AND expires_at > clock_timestamp()
RETURNING epoch`

// releaseSQL gives the lease up by expiring the row, never by deleting it:
// a deleted row would restart the epoch and reuse fencing tokens.
// $1 name, $2 holder, $3 epoch.
const releaseSQL = `UPDATE worker_leases
   SET expires_at = clock_timestamp()
 WHERE name = $1 AND holder = $2 AND epoch = $3
   AND expires_at > clock_timestamp()`
