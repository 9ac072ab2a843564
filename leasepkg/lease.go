package leasepkg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Lease is a holder's claim on a lease at one epoch: the fencing token that
// every fenced write carries. It is plain data; only the database decides
// whether it is still valid.
type Lease struct {
	Name   string
	Holder string
	Epoch  int64
	// Term identifies the acquisition that granted the lease, a random id
	// of its own beside the holder's name: two processes configured with
	// one holder id hold two terms, and a renewal renews only its own.
	// Empty in a Lease made by hand, which then renews its epoch only.
	Term string
}

func (l Lease) String() string {
	return fmt.Sprintf("%s@%d (%s)", l.Name, l.Epoch, l.Holder)
}

// Manager acquires, renews and releases one lease, and makes fenced writes
// under it. It is safe for concurrent use.
type Manager struct {
	cfg   Config
	pool  *pgxpool.Pool // acquisitions and fenced writes
	renew *pgxpool.Pool // renewals and release, so that a busy pool cannot starve them
	owned bool          // Close closes pool too
	// client, if the Manager is a Client's, renews its terms in the
	// Client's batch and owns renew and events.
	client *Client

	closed atomic.Bool
	events *eventQueue // nil without an Observer

	// terms are the terms whose fn runs, each with its context: what
	// Healthy looks at.
	termsMu sync.Mutex
	terms   map[*Term]context.Context

	// unconfirmedTerm is the term of the last acquisition whose outcome was
	// unknown, until an acquisition succeeds: the next Acquire sends it
	// again, and so resumes the lease if that acquisition committed.
	unconfirmedTerm atomic.Pointer[string]

	// fenceStmt is the fence (fenceSQL): set by New, and weakened only by
	// Weaken (weaken.go, in builds with the leaseguard_weaken tag).
	fenceStmt string
}

// Open connects to cfg.DSN and returns a Manager that owns the connection
// pool. If the lease table exists, Open checks the schema as
// [Manager.CheckSchema] does and fails with an error wrapping ErrSchema if
// it cannot hold the fence; if it does not exist yet, [Manager.Migrate]
// creates and checks it. A schema that the previous version of this
// package made (it lacks everything this version added, and nothing else)
// opens, and [Manager.Migrate] brings it up to date; run it before
// acquiring. Before the schema, Open checks that the database cannot lose
// the commits it acknowledges, as [Manager.CheckDurability] does, and
// fails with an error wrapping ErrAsyncCommit if it can (asynchronous
// standbys, synchronous_commit off), unless cfg.AllowAsyncCommit is set.
// The context governs connecting and the checks.
func Open(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.DSN == "" {
		return nil, errors.New("lease config: dsn must not be empty")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pool, err := openPool(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	m, err := New(pool, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	m.owned = true
	if err := checkOpened(ctx, pool, cfg, m.CheckDurability); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// openPool opens and pings a pool on dsn, for Open and OpenClient.
func openPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open lease database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open lease database: %w", err)
	}
	return pool, nil
}

// checkOpened makes Open's and OpenClient's checks on the database of a
// pool just opened: its durability (by durability, unless
// cfg.AllowAsyncCommit) and, when the lease table exists, its schema
// (ErrSchema, unless it is the previous version, which Migrate upgrades).
func checkOpened(ctx context.Context, pool *pgxpool.Pool, cfg Config, durability func(context.Context) error) error {
	if !cfg.AllowAsyncCommit {
		if err := durability(ctx); err != nil {
			return fmt.Errorf("open lease database: %w", err)
		}
	}
	exists, err := leaseTableExists(ctx, pool)
	if err == nil && exists {
		var problems []problem
		problems, err = schemaProblems(ctx, pool)
		if err == nil && !previousVersion(problems) {
			err = schemaError(problems)
		}
	}
	if err != nil {
		return fmt.Errorf("open lease database: %w", err)
	}
	return nil
}

// New returns a Manager that makes fenced writes on pool, which the caller
// keeps and closes after the Manager. Renewals run on a small pool of their
// own with pool's connection settings, so that a saturated pool cannot delay
// them. cfg.DSN is ignored. New does no I/O, and so checks neither the
// schema nor durability: call [Manager.CheckDurability] and
// [Manager.Migrate] or [Manager.CheckSchema] before acquiring.
func New(pool *pgxpool.Pool, cfg Config) (*Manager, error) {
	cfg.DSN = ""
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rc := pool.Config().Copy()
	rc.MinConns, rc.MaxConns = 0, 2
	renew, err := pgxpool.NewWithConfig(context.Background(), rc)
	if err != nil {
		return nil, fmt.Errorf("renewal pool: %w", err)
	}
	m := newManager(pool, renew, cfg)
	if cfg.Observer != nil {
		m.events = newEventQueue(cfg.Observer)
	}
	return m, nil
}

// newManager returns a Manager of cfg's lease on pool, renewing on renew.
func newManager(pool, renew *pgxpool.Pool, cfg Config) *Manager {
	return &Manager{
		cfg:       cfg,
		pool:      pool,
		renew:     renew,
		fenceStmt: fenceSQL,
	}
}

// Close closes the renewal pool, and the main pool if Open made it, and
// waits until the events queued for the Observer before it have been
// delivered. Calls made after Close return ErrClosed. A Client's Manager
// shares those with the Client, which closes them: Close closes only the
// Manager.
func (m *Manager) Close() {
	if m.closed.Swap(true) {
		return
	}
	if m.client != nil {
		m.client.forget(m)
		return
	}
	m.renew.Close()
	if m.owned {
		m.pool.Close()
	}
	if m.events != nil {
		m.events.close()
	}
}

// Config returns the Manager's configuration, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

func (m *Manager) check() error {
	if m.closed.Load() {
		return ErrClosed
	}
	return nil
}

// observe tells the Metrics and the Logger of an event, on the calling
// goroutine, and queues it for the Observer.
func (m *Manager) observe(kind EventKind, l Lease, err error) { m.observeTook(kind, l, err, 0) }

// observeTook is observe with a renewal's latency, for the Metrics and the
// Logger.
func (m *Manager) observeTook(kind EventKind, l Lease, err error, took time.Duration) {
	e := Event{Kind: kind, Lease: l, Err: err}
	count(m.cfg.Metrics, e, took)
	logEvent(m.cfg.Logger, e, took)
	if m.events != nil {
		m.events.push(e)
	}
}

// idleInTxSetting is the fencing sessions' idle timeout as PostgreSQL reads it.
func (m *Manager) idleInTxSetting() string {
	return strconv.FormatInt(m.cfg.idleInTx().Milliseconds(), 10) + "ms"
}

// ttlMillis is the TTL as the SQL takes it; Validate made it whole milliseconds.
func (m *Manager) ttlMillis() int64 { return m.cfg.TTL.Milliseconds() }

// Migrate creates the lease table if it does not exist, adds
// what an earlier version's tables lack (the term column, and each of the
// triggers that keep epochs growing that is missing; an existing trigger is
// left as it is), then checks them as [Manager.CheckSchema] does: tables made earlier, or changed
// since, fail with an error wrapping ErrSchema rather than leave a fence that
// does not hold. It is idempotent and safe to run from several processes at
// once. The context governs the whole migration.
func (m *Manager) Migrate(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	err := pgx.BeginTxFunc(ctx, m.pool, readCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return err
		}
		return checkSchema(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("migrate lease schema: %w", err)
	}
	return nil
}

// Acquire takes the lease: it inserts the lease row if there is none, or
// takes over a lease that has expired by the database's clock. Every
// acquisition bumps the epoch and starts a term (Lease.Term). An
// acquisition whose outcome was unknown (ErrOutcomeUnknown: the commit was
// sent, its reply lost) may have committed; the Manager's next Acquire
// sends its term again, and resumes at a new epoch the unexpired lease that
// it left, rather than find its own lease held for a TTL. A lease held by
// a term this Manager did not acquire returns an error wrapping
// ErrLeaseHeld that says whose. A takeover of an expired lease that waited
// longer than LockTimeout for the old holder's open fenced transactions
// returns one wrapping ErrTakeoverBlocked; with TerminateBlockers set, the
// takeover first ends those of them that are idle in transaction. The
// context governs the whole acquisition.
func (m *Manager) Acquire(ctx context.Context) (Lease, error) {
	if err := m.check(); err != nil {
		return Lease{}, err
	}
	// An acquisition whose outcome was unknown may have committed: its
	// term is tried again, so that the lease it may hold is resumed.
	term := m.unconfirmedTerm.Load()
	if term == nil {
		term = new(newTermID())
	}
	l := Lease{Name: m.cfg.Name, Holder: m.cfg.Holder, Term: *term}
	epoch, err := m.acquire(ctx, l.Term)
	switch {
	case errors.Is(err, ErrOutcomeUnknown):
		m.unconfirmedTerm.CompareAndSwap(nil, term)
	case err == nil:
		m.unconfirmedTerm.CompareAndSwap(term, nil)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("acquire lease %q: %w", l.Name, err)
	}
	l.Epoch = epoch
	m.observe(Acquired, l, nil)
	return l, nil
}

func (m *Manager) acquire(ctx context.Context, term string) (int64, error) {
	name, holder, ttl := m.cfg.Name, m.cfg.Holder, m.ttlMillis()

	// 1. On a connection of its own, so that its backend's pid is known
	// to the blocker check of step 2.
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if m.cfg.TerminateBlockers {
		stop := m.terminateBlockers(ctx, conn.Conn().PgConn().PID())
		defer stop()
	}

	// 2. In one round trip with its BEGIN and COMMIT: take over an expired
	// lease, else insert the first row (a no-op where a row exists), and
	// read the row as this transaction left it. The takeover waits at most
	// LockTimeout for fenced transactions under the old epoch.
	var taken, first bool
	var epoch int64
	var cur, curTerm string
	err = inTx(ctx, conn, m.cfg.LockTimeout, func(b *pgx.Batch) {
		b.Queue(takeoverSQL, name, holder, ttl, term)
		b.Queue(firstSQL, name, holder, ttl, term)
		b.Queue(holderSQL, name)
		b.Queue(notifyAcquiredSQL, name, holder) // delivered only if this commits
	}, func(br pgx.BatchResults) error {
		var err error
		if taken, err = scanOptional(br.QueryRow(), &epoch); err != nil {
			return err
		}
		if first, err = scanOptional(br.QueryRow(), &epoch); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&cur, &curTerm); err != nil {
			return err
		}
		_, err = br.Exec() // notify
		return err
	})
	switch {
	case isWaitTimeout(err):
		return 0, fmt.Errorf("%w: %w", ErrTakeoverBlocked, err)
	case err != nil:
		return 0, err
	case !taken && !first && cur == holder:
		return 0, fmt.Errorf("%w: by a term this Manager did not acquire, under its own holder id %q: is another process configured with it?", ErrLeaseHeld, cur)
	case !taken && !first:
		return 0, fmt.Errorf("%w: by holder %q", ErrLeaseHeld, cur)
	}
	return epoch, nil
}

// scanOptional scans the row that a statement returned into dest, or
// reports that it returned none.
func scanOptional(row pgx.Row, dest ...any) (bool, error) {
	err := row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// terminateBlockers ends, while the takeover on backend pid waits, the
// backends that block it and are idle in transaction: open fenced
// transactions of a holder whose lease has expired by the database's clock
// (the takeover waits only on an expired row) and whose client sends
// nothing, as when it is partitioned from the database. It polls from the
// renewal pool every quarter of LockTimeout until the returned function is
// called. pg_terminate_backend needs the blockers' role, membership in it,
// or pg_signal_backend (superusers' backends only a superuser); without it
// nothing is ended and the takeover fails with ErrTakeoverBlocked.
func (m *Manager) terminateBlockers(ctx context.Context, pid uint32) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(m.cfg.LockTimeout/4, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var ended int64
			err := m.renew.QueryRow(ctx, terminateBlockersSQL, int64(pid), m.cfg.Name).Scan(&ended)
			if err != nil && ctx.Err() == nil {
				m.observe(TerminateFailed, Lease{Name: m.cfg.Name, Holder: m.cfg.Holder}, err)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Renew extends l by the TTL, from the database's clock, in one statement
// on the renewal pool. It returns the lease as renewed. Under PerRenewal it
// also bumps the epoch, which must wait for the holder's own fenced writes
// under the old epoch; it waits at most a quarter of the RenewInterval (or
// LockTimeout if less), and when fenced writes keep the row locked longer
// the renewal extends the lease without bumping, as PerTerm does, so that a
// busy holder keeps its lease; a later renewal bumps. A PerRenewal renewal
// also accepts a later epoch of l's own term (l.Term), which an earlier
// bump whose outcome was unknown may have set; never one of another term,
// even under the same holder id.
//
// A lease that has expired or that another holder took returns an error
// wrapping ErrLeaseLost. Any other error says nothing about the lease: it
// may or may not have been renewed. The context governs the statements;
// Hold gives them a deadline that ends before the lease could expire.
func (m *Manager) Renew(ctx context.Context, l Lease) (Lease, error) {
	if err := m.check(); err != nil {
		return Lease{}, err
	}
	var epoch int64
	var err error
	start := time.Now() // latency only: decides no statement
	if m.cfg.Policy == PerRenewal {
		err = inTx(ctx, m.renew, m.bumpWait(), func(b *pgx.Batch) {
			b.Queue(renewBumpSQL, l.Name, l.Holder, l.Epoch, m.ttlMillis(), l.Term)
		}, func(br pgx.BatchResults) error {
			return br.QueryRow().Scan(&epoch)
		})
	}
	switch {
	case m.cfg.Policy == PerTerm:
		err = m.renew.QueryRow(ctx, renewTermSQL, l.Name, l.Holder, l.Epoch, m.ttlMillis()).Scan(&epoch)
	case isWaitTimeout(err):
		// The holder's fenced writes kept the row locked past the bump's
		// timeout: extend now, bump at a later renewal.
		err = m.renew.QueryRow(ctx, renewLaterSQL, l.Name, l.Holder, l.Epoch, m.ttlMillis(), l.Term).Scan(&epoch)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = fmt.Errorf("renew lease %s: %w", l, ErrLeaseLost)
		m.observe(Lost, l, err)
		return Lease{}, err
	case err != nil:
		return Lease{}, fmt.Errorf("renew lease %s: %w", l, err)
	}
	l.Epoch = epoch
	m.observeTook(Renewed, l, nil, time.Since(start))
	return l, nil
}

// bumpWait bounds how long a PerRenewal bump waits for the holder's own
// fenced writes: a quarter of the renewal interval, so that a renewal that
// then extends without bumping still ends well inside its attempt, or
// LockTimeout if that is less.
func (m *Manager) bumpWait() time.Duration {
	return max(min(m.cfg.LockTimeout, m.cfg.RenewInterval/4), time.Millisecond)
}

// Release gives the lease up by expiring its row (the row is never deleted,
// and the schema refuses to delete it, so that its epochs only grow); the next Acquire by anyone takes it over at
// once. A lease that was already lost returns an error wrapping ErrLeaseLost.
// The context governs the statement.
func (m *Manager) Release(ctx context.Context, l Lease) error {
	if err := m.check(); err != nil {
		return err
	}
	var released int64
	err := inTx(ctx, m.renew, 0, func(b *pgx.Batch) {
		b.Queue(releaseSQL, l.Name, l.Holder, l.Epoch)
		b.Queue(notifySQL, l.Name)
	}, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		released = tag.RowsAffected()
		if err == nil {
			_, err = br.Exec() // notify
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l, err)
	}
	if released != 1 {
		return fmt.Errorf("release lease %s: %w", l, ErrLeaseLost)
	}
	m.observe(Released, l, nil)
	return nil
}

// Resign gives the lease up at once, so that a contender can take it over
// without waiting for it to expire; it is Release under the name etcd's
// concurrency package gives it. The context governs the statement.
func (m *Manager) Resign(ctx context.Context, l Lease) error { return m.Release(ctx, l) }

// outcomeError classifies the failure of a COMMIT, or of a statement that
// is its own transaction. A commit that turned into a rollback, a failure
// before anything was sent, or an error of the server about the statement
// itself means nothing committed. Anything else leaves the outcome unknown:
// the connection failed, or the context ended, after the statement was sent;
// or the error says the connection or the server went away (class 08, which
// a pooler can synthesize after it forwarded the commit; 57P0x, an
// administrator's or the server's shutdown, which can end a commit that
// already holds locally, as when a synchronous standby is awaited), or that
// the statement's completion is unknown (40003).
func outcomeError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		if !outcomeUnknownCode(pgErr.Code) {
			return err
		}
	case errors.Is(err, pgx.ErrTxCommitRollback), pgconn.SafeToRetry(err):
		return err
	}
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}

// outcomeUnknownCode says whether a server error with SQLSTATE code leaves
// a commit's outcome unknown.
func outcomeUnknownCode(code string) bool {
	return strings.HasPrefix(code, "08") || // connection_exception
		strings.HasPrefix(code, "57P0") || // admin_shutdown, crash_shutdown, cannot_connect_now, database_dropped, idle_session_timeout
		code == "40003" // statement_completion_unknown
}
