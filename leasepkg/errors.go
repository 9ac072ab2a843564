package leasepkg

import "errors"

// The package's sentinel errors. Returned errors wrap them with context; test
// with errors.Is.
var (
	// ErrLeaseLost means this holder no longer holds the lease: a renewal
	// matched no row (the lease expired, or another holder took it), or no
	// renewal could be confirmed before the lease could have expired. The
	// holder must stop writing.
	ErrLeaseLost = errors.New("lost lease; refuse all writes")

	// ErrStaleFence means a fenced write was rejected, and nothing was
	// written: its epoch is not the lease's current epoch, its holder does
	// not hold the lease, or the lease has expired by the database's clock.
	ErrStaleFence = errors.New("stale fence; drop the write")

	// ErrLeaseHeld means an unexpired lease is held by a term that this
	// Manager did not acquire: another holder's, or one under this
	// holder id that another process acquired. The error that wraps it
	// says which.
	ErrLeaseHeld = errors.New("lease held")

	// ErrTakeoverBlocked means the lease has expired by the database's
	// clock, but transactions that hold its row lock (fenced transactions
	// under the old epoch that have not ended, such as those of a holder
	// partitioned from the database) kept the takeover waiting past
	// LockTimeout. They end when they commit, roll back or reach the
	// fencing sessions' idle timeout (Config.IdleInTxTimeout), and with
	// Config.TerminateBlockers a takeover ends the idle ones itself.
	ErrTakeoverBlocked = errors.New("takeover of an expired lease blocked by the old holder's open transactions")

	// ErrOutcomeUnknown means the connection failed, or the context ended,
	// after a write's commit was sent and before it was confirmed, or the
	// server answered the commit with an error that does not say it rolled
	// back (SQLSTATE class 08, 57P0x, 40003), so it may or may not have
	// committed. It is not a rejection: look the write up by
	// its key before retrying it.
	ErrOutcomeUnknown = errors.New("outcome unknown: the commit was not confirmed")

	// ErrSchema means the lease table differs from what the fence needs (a
	// column's type, a unique index, a trigger), so that fenced writes could
	// land under a stale epoch. The error that wraps it says what differs.
	ErrSchema = errors.New("lease schema cannot hold the fence")

	// ErrIsolation means a fenced statement ran in a transaction that is not
	// READ COMMITTED. Under REPEATABLE READ or SERIALIZABLE the fence reads
	// the lease row as of the transaction's snapshot: a valid holder's write
	// is refused when a renewal committed after the snapshot, and a lock on a
	// row changed since fails with a serialization error (SQLSTATE 40001),
	// which this error wraps. Nothing the fence decided can be trusted: roll
	// the transaction back and run it as READ COMMITTED.
	ErrIsolation = errors.New("fenced statement needs a READ COMMITTED transaction")

	// ErrSavepoint means a fence was taken inside a subtransaction (a
	// savepoint, a nested pgx transaction), or after one that wrote and was
	// released. Rolling back to a savepoint releases the row lock taken
	// after it, and the transaction's later writes would then commit
	// unfenced, after another holder took over. Roll the transaction back,
	// and fence it at its top level, before any savepoint.
	ErrSavepoint = errors.New("fence inside a savepoint: rolling back to it would release the lease row's lock")

	// ErrAsyncCommit means the database acknowledges commits that a crash
	// or a failover can lose: standbys stream from it and none is
	// synchronous, or synchronous_commit is off for the lease's sessions
	// (or local, while a synchronous standby is named). A lost commit can
	// be an acquisition: the next one grants its epoch again, to another
	// holder, and writes acknowledged under the first grant are gone.
	// [Open] and [Manager.CheckDurability] return it, unless
	// Config.AllowAsyncCommit accepts that; the error that wraps it says
	// what it found and how to fix it.
	ErrAsyncCommit = errors.New("the database can lose commits it acknowledged, and with them a granted epoch")

	// ErrRenewalStalled means a term that a Manager's Hold or Campaign
	// runs has had no renewal confirmed for longer than it should
	// ([Manager.Healthy]): the database cannot be reached, or answers too
	// slowly, or the term's function goes on after its context was
	// cancelled. The error that wraps it says for how long.
	ErrRenewalStalled = errors.New("renewals of a held lease have stalled")

	// ErrClosed means the Manager was closed.
	ErrClosed = errors.New("lease manager closed")
)
