//leaseguard:lease

// Package leasepkg is a lease on PostgreSQL whose fencing tokens are checked
// by the database in the same transaction as the write they guard.
//
// One database holds the lease rows (worker_leases) and the caller's own
// tables that they guard. A holder acquires a lease ([Manager.Acquire],
// [Manager.Hold], or [Manager.Campaign], which waits) and gets an epoch,
// the fencing token. A write under the lease is fenced: [Manager.Fence],
// the first statement of the caller's transaction, goes on only if the
// lease row still names this holder at exactly that epoch and has not
// expired by the database's clock, and holds the row's lock until the
// transaction ends; [Manager.Tx] wraps a transaction in it.
// [Manager.FenceSQL] and [Manager.TxSQL] do the same for database/sql
// (pgx's stdlib driver). examples/orders, in this module, is a table of
// one's own written this way.
// [Manager.Leader] and [Manager.Observe] say who leads.
//
// A process that holds many leases (one per shard, tenant or partition)
// makes one [Client] and takes a Manager per lease name from it
// ([Client.Manager]): the Client renews all of their terms in one
// statement a tick, on one connection, and one listening connection
// serves all of their observers.
//
// # Guarantees
//
// No fenced write lands under a stale epoch: every transaction fenced at
// epoch N commits before the acquisition of epoch N+1 commits, whatever
// the holder's process, clock or network does. The fence goes on only if,
// when it runs, the lease row says epoch N, this holder, unexpired by
// clock_timestamp(); it then holds FOR KEY SHARE on the lease row until its
// transaction ends, and every change of the epoch locks the row FOR UPDATE,
// so it waits for that transaction. A paused, partitioned or slow holder's
// late writes are rejected, not applied.
//
// Expiry is tested when the fenced statement runs, not when its transaction
// commits: a transaction that stays open after its fence can commit after
// expires_at has passed, though never after another holder's acquisition,
// which waits for it (at most LockTimeout, after which the acquisition fails).
//
// Fenced transactions must run under READ COMMITTED, PostgreSQL's default:
// under REPEATABLE READ or SERIALIZABLE the fence would read the lease row as
// of the transaction's snapshot. The package's own transactions ask for READ
// COMMITTED; the fence checks the level of the caller's transaction in
// the same round trip, [Manager.Migrate] and [Open] check the session's
// default, and a serialization failure of the fence is reported as
// [ErrIsolation].
//
// The guarantee covers only writes made through the fence, to tables in the
// same database as the lease row. A write to another store (a queue, an
// object store, another database) cannot see the fence and is not protected
// by it.
//
// A lease name's epochs only grow, and each is granted by one acquisition:
// the schema's triggers refuse DELETE, TRUNCATE, a rename and an epoch
// moved back, and [Manager.CheckSchema] fails without them.
//
// All of this holds on one database history, which a database that never
// loses a commit it acknowledged keeps: a single primary whose lease
// sessions commit with synchronous_commit on (or local, the same there),
// or a primary with standbys that acknowledges a commit only once a
// synchronous standby has it (synchronous_standby_names naming the
// standbys, synchronous_commit on, remote_write or remote_apply), failing
// over only to a synchronous standby. [Open] checks what the server shows
// of that ([Manager.CheckDurability]) and refuses, with an error wrapping
// [ErrAsyncCommit], a primary from which standbys stream while none is
// synchronous, and lease sessions whose synchronous_commit is off, or
// local while a synchronous standby is named; Config.AllowAsyncCommit
// accepts the risk. [New] does no I/O and checks nothing: call
// [Manager.CheckDurability] after it.
//
// # Non-guarantees
//
// A database that loses acknowledged commits loses acquisitions with them:
// a standby promoted under asynchronous replication, a primary that crashes
// with synchronous_commit off, a restore to an earlier point in time. The
// next acquisition grants an epoch already granted, to another holder, and
// writes acknowledged under the first grant are gone. The fence still
// refuses the first holder's later writes, since it tests the holder too,
// but epochs are reused across such a failover. Open's check cannot see a
// standby that is not streaming when it runs, which standby a failover
// manager will promote, or a restore; with AllowAsyncCommit set it does
// not refuse at all. The epoch does not carry the server's timeline: a
// promotion's new timeline is not greater than every earlier one (two
// standbys promoted apart both take the next), and it would not bring
// back the lost writes.
//
// A fenced transaction whose client stops talking (a holder partitioned from
// the database) holds the lease row's lock until the server ends its session
// after Config.IdleInTxTimeout, which the fence sets; until then a takeover
// fails with [ErrTakeoverBlocked]. Failover after such a partition takes at
// most the TTL after the last renewal plus that timeout, a retry interval and
// LockTimeout; Config.TerminateBlockers shortens it.
//
// Holding a lease does not mean that no one else acts as the holder: a
// process can believe it holds a lease that the database has already given
// to another, until its next renewal fails or its context is cancelled. Hold
// cancels the context Config.StopMargin before the lease could expire, as
// this process's monotonic clock measures it from the last confirmed
// renewal, but the fence is what stops the write. Work outside the database that fn does on a lease it has lost is
// not undone.
//
// Every expiry decision is made by the database's clock, never by the Go
// process's: the Go side only schedules (timers, tickers, context
// deadlines). The package imports no HTTP client and no model SDK; it
// reports what happens to a lease through [Observer], [Metrics] (which
// leasepkg/leaseprom adapts to Prometheus, outside this package) and
// Config.Logger, a log/slog logger. [Manager.Healthy] serves a health
// check.
package leasepkg
