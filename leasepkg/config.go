package leasepkg

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDSN is the environment variable that [FromEnv] reads the DSN from.
const EnvDSN = "LEASE_DATABASE_URL"

// Defaults of [Config].
const (
	DefaultTTL           = 15 * time.Second
	DefaultRenewInterval = 5 * time.Second
	DefaultLockTimeout   = time.Second
)

// EpochPolicy says when the epoch, the lease's fencing token, changes.
type EpochPolicy int

const (
	// PerTerm changes the epoch only when holdership changes (the first
	// acquisition and every takeover). A holder's writes stay valid across its
	// own renewals. The default.
	PerTerm EpochPolicy = iota
	// PerRenewal bumps the epoch on every renewal as well, as the post this
	// package grew from does. A write that takes the epoch before a renewal
	// and reaches its fence after it is rejected by its own holder's lease.
	PerRenewal
)

func (p EpochPolicy) String() string {
	switch p {
	case PerTerm:
		return "per-term"
	case PerRenewal:
		return "per-renewal"
	}
	return "EpochPolicy(" + strconv.Itoa(int(p)) + ")"
}

// Config configures a [Manager]. Start from [FromEnv] or [DefaultConfig];
// the zero value is not valid.
type Config struct {
	// DSN is the PostgreSQL connection string that [Open] connects to, a URL
	// or key=value pairs as pgx accepts them. [New], which is given a pool,
	// ignores it. Default (from [FromEnv]): $LEASE_DATABASE_URL.
	DSN string

	// Name is the lease's name, the primary key of its row. Required.
	Name string

	// Holder identifies this process in the lease row. It should be unique
	// among the contenders. Two processes with the same holder are told
	// apart by their terms (Lease.Term, a random id of each acquisition):
	// neither takes over or renews the other's term, and each one's fence
	// admits only its own epoch; but a write under a Lease that one of them
	// hands the other passes the fence. Default: hostname:pid:random, the
	// random part because containers reuse hostnames and pid 1.
	Holder string

	// TTL is how long a lease lives after the database last extended it.
	// Default 15s; at least a millisecond, in whole milliseconds.
	TTL time.Duration

	// RenewInterval is how often a holder renews. It must be less than half
	// the TTL, so that at least two renewals fall inside one TTL and a single
	// failed renewal does not lose the lease. Default 5s.
	RenewInterval time.Duration

	// StopMargin is how long before the lease could expire, as this
	// process last confirmed it, Hold and Campaign cancel the term's
	// context (client-go's renew deadline beside its lease duration): a
	// term whose renewals are not confirmed stops work that long before
	// another holder can take over. The deadline counts from the moment
	// the last confirmed renewal (or the acquisition) was sent, which is
	// before the database set expires_at from its own clock; the margin
	// covers what that does not: this process's clock running at a
	// slightly different rate from the database's (NTP slews a clock by
	// up to 500 ppm, 7.5 ms in a 15 s TTL), a timer that fires late or a
	// function that notices its cancelled context late (a GC pause, CPU
	// throttling of a container, a paused VM), and the time fn needs to
	// wind down work outside the database. Zero means a tenth of the
	// TTL, 1.5s by default, or half of what the TTL leaves past two
	// renewal intervals if that is less; otherwise it must be positive and
	// less than the TTL less two RenewIntervals, so that one failed
	// renewal does not end a term. The fence, not the margin, is what
	// stops a late write.
	StopMargin time.Duration

	// LockTimeout bounds how long a takeover waits for the row lock that the
	// old holder's in-flight fenced writes hold; a takeover that times out
	// returns ErrTakeoverBlocked. Default 1s; must be less than the TTL.
	LockTimeout time.Duration

	// IdleInTxTimeout is the idle_in_transaction_session_timeout (and, on
	// PostgreSQL 17 and later, the transaction_timeout) that a fence sets
	// for the rest of the caller's transaction: the server ends the session
	// of a fenced transaction whose client has sent nothing for that long
	// (a holder partitioned from the database, a process paused), and so
	// releases the lease row for a takeover. A fenced transaction that must
	// idle longer between its statements is ended too. The package's own
	// transactions never idle: each is sent with its COMMIT in one round
	// trip. Zero means half the TTL; otherwise it must be less than the
	// TTL, in whole milliseconds.
	IdleInTxTimeout time.Duration

	// TerminateBlockers lets a takeover of a lease that has expired by the
	// database's clock end the sessions that block it while idle in
	// transaction (pg_blocking_pids, pg_terminate_backend), rather than wait
	// for IdleInTxTimeout. The role needs to be the blockers' role, a member
	// of it, or a member of pg_signal_backend (a superuser's sessions only a
	// superuser may end); without that nothing is ended, the observer is
	// told (TerminateFailed), and the takeover fails with
	// ErrTakeoverBlocked until the idle timeout ends them. Default false.
	TerminateBlockers bool

	// AllowAsyncCommit lets [Open] go on where the database can lose
	// commits that it acknowledged, which it otherwise refuses with an
	// error wrapping ErrAsyncCommit: standbys stream from it and none is
	// synchronous (a failover to one of them can lose the last
	// acquisitions and grant an epoch twice), or synchronous_commit is off
	// for the lease's sessions (a crash of the server loses the last
	// commits), or local while synchronous_standby_names names a standby.
	// Set it only where the lease need not survive such a failover or
	// crash: epochs can then be granted twice, and acknowledged writes
	// lost (see the package doc's Guarantees). Default false.
	AllowAsyncCommit bool

	// Policy says when the epoch changes. Default (the zero value) PerTerm.
	Policy EpochPolicy

	// Observer is told of acquisitions, renewals, losses and rejected
	// writes, in order, on a goroutine of the Manager's own (see
	// [Observer]: a slow one delays no renewal, and past MaxQueuedEvents
	// waiting events it misses some, counted in Event.Dropped). Nil means
	// no one is told. Until the Manager is closed, that goroutine lives.
	Observer Observer

	// Logger, if not nil, logs acquisitions and releases (Info), renewals
	// (Debug), failed renewals, refused fenced writes and a campaign's
	// retries after an error (Warn), losses and a campaign that gives up
	// (Error), each with the lease's name, holder, epoch and term and the
	// error. It is called on the goroutine where the thing happened (the
	// renewal loop among them), as log/slog's handlers are everywhere: a
	// handler that blocks delays renewals. Nil means no logging.
	Logger *slog.Logger

	// Metrics, if not nil, is told of acquisitions, renewals and their
	// latency, failed renewals, losses, releases and refused fenced
	// writes, on the goroutine where each happened (see [Metrics]; it must
	// not block). leasepkg/leaseprom adapts it to Prometheus. Nil means
	// none.
	Metrics Metrics
}

// DefaultConfig returns the defaults for a lease called name, with a fresh
// holder id and no DSN.
func DefaultConfig(name string) Config {
	return Config{
		Name:          name,
		Holder:        NewHolderID(),
		TTL:           DefaultTTL,
		RenewInterval: DefaultRenewInterval,
		LockTimeout:   DefaultLockTimeout,
		Policy:        PerTerm,
	}
}

// FromEnv returns [DefaultConfig] with the DSN from $LEASE_DATABASE_URL,
// validated.
func FromEnv(name string) (Config, error) {
	cfg := DefaultConfig(name)
	cfg.DSN = os.Getenv(EnvDSN)
	if cfg.DSN == "" {
		return Config{}, fmt.Errorf("lease config: %s is not set", EnvDSN)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// NewHolderID returns hostname:pid:random, a holder id unique to this process.
func NewHolderID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// newTermID returns a random id for a term, the acquisition that grants it.
func newTermID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

// Validate reports every problem with the configuration, joined. A DSN, when
// set, must parse; [New] does not need one.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if c.Name == "" {
		bad("name must not be empty")
	}
	if c.Holder == "" {
		bad("holder must not be empty")
	}
	switch {
	case c.TTL < time.Millisecond:
		bad("ttl must be at least 1ms, got %v", c.TTL)
	case c.TTL%time.Millisecond != 0:
		bad("ttl must be a whole number of milliseconds, got %v", c.TTL)
	}
	switch {
	case c.RenewInterval <= 0:
		bad("renew interval must be positive, got %v", c.RenewInterval)
	case 2*c.RenewInterval >= c.TTL:
		bad("renew interval %v must be less than half the ttl %v, so that two renewals fall inside one ttl", c.RenewInterval, c.TTL)
	}
	switch {
	case c.StopMargin < 0:
		bad("stop margin must not be negative, got %v", c.StopMargin)
	case c.StopMargin > 0 && c.RenewInterval > 0 && c.StopMargin >= c.TTL-2*c.RenewInterval:
		bad("stop margin %v must be less than the ttl %v less two renew intervals %v, so that one failed renewal does not end a term", c.StopMargin, c.TTL, c.RenewInterval)
	}
	switch {
	case c.LockTimeout < time.Millisecond:
		bad("lock timeout must be at least 1ms, got %v", c.LockTimeout)
	case c.LockTimeout >= c.TTL:
		bad("lock timeout %v must be less than the ttl %v", c.LockTimeout, c.TTL)
	}
	switch {
	case c.IdleInTxTimeout < 0:
		bad("idle-in-transaction timeout must not be negative, got %v", c.IdleInTxTimeout)
	case c.IdleInTxTimeout%time.Millisecond != 0:
		bad("idle-in-transaction timeout must be a whole number of milliseconds, got %v", c.IdleInTxTimeout)
	case c.IdleInTxTimeout >= c.TTL && c.TTL > 0:
		bad("idle-in-transaction timeout %v must be less than the ttl %v", c.IdleInTxTimeout, c.TTL)
	}
	if c.Policy != PerTerm && c.Policy != PerRenewal {
		bad("unknown epoch policy %v", c.Policy)
	}
	if c.DSN != "" {
		// pgx redacts the password from the DSN it quotes.
		if _, err := pgxpool.ParseConfig(c.DSN); err != nil {
			bad("bad dsn: %v", err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("lease config: %w", errors.Join(errs...))
}

// stopMargin is StopMargin with its default filled in.
func (c Config) stopMargin() time.Duration {
	if c.StopMargin == 0 {
		return max(min(c.TTL/10, (c.TTL-2*c.RenewInterval)/2), 0)
	}
	return c.StopMargin
}

// workFor is how long after the last confirmed renewal (or the
// acquisition) was sent a term's context is cancelled: the TTL less the
// stop margin.
func (c Config) workFor() time.Duration { return c.TTL - c.stopMargin() }

// idleInTx is IdleInTxTimeout with its default filled in.
func (c Config) idleInTx() time.Duration {
	if c.IdleInTxTimeout == 0 {
		return max((c.TTL / 2).Truncate(time.Millisecond), time.Millisecond)
	}
	return c.IdleInTxTimeout
}
