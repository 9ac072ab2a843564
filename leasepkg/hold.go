package leasepkg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Term is one tenure of a holder, handed to the function that [Manager.Hold]
// runs. Its lease changes under PerRenewal as renewals bump the epoch.
type Term struct {
	m     *Manager
	lease atomic.Pointer[Lease]
	state atomic.Int32 // termAcquiring, termStarted, termExpired
	// confirmed is when the last confirmed renewal, or the acquisition,
	// was sent: for Healthy only.
	confirmed atomic.Pointer[time.Time]
}

// Lease returns the current fencing token.
func (t *Term) Lease() Lease { return *t.lease.Load() }

// Hold acquires the lease, renews it every RenewInterval, and runs fn while
// it holds. fn's context is cancelled the moment the lease is lost: when a
// renewal finds the lease expired or taken, or when no renewal has been
// confirmed for the TTL less Config.StopMargin (so that fn stops that long
// before the lease could expire), or when ctx is done. fn must return soon
// after its context is done.
//
// Hold returns an error wrapping ErrLeaseHeld (or ErrTakeoverBlocked) if it
// could not acquire, one wrapping ErrLeaseLost if the lease was lost while
// fn ran, and otherwise fn's error. The term's deadline starts when its
// acquisition is sent: an acquisition confirmed only after the TTL less
// the stop margin (a slow pool, a slow network) could expire before fn
// has done anything, so Hold releases it and returns an error wrapping
// ErrLeaseLost without running fn. When fn returns while the lease is
// held, Hold releases it, on a context that outlives ctx's cancellation and
// is bounded by the TTL.
//
// The cancelled context is a courtesy, not the guarantee: between the
// database expiring a lease and the context's cancellation, fn can still
// try to write, and only the fence stops that write. Hold's timers start
// before each statement is sent, and end the stop margin before a TTL, so
// the context is cancelled that long before the lease could have expired,
// as measured by this process's monotonic clock, which may run at a
// slightly different rate from the database's.
func (m *Manager) Hold(ctx context.Context, fn func(ctx context.Context, t *Term) error) error {
	return m.hold(ctx, false, fn)
}

// Campaign is Hold that waits to acquire. While another holder holds the
// lease (ErrLeaseHeld) or a takeover is blocked (ErrTakeoverBlocked), it
// tries again after a RenewInterval, jittered between half and one and a
// half times that so that contenders spread out, and sooner if the lease
// expires earlier by the database's clock; a [Client]'s campaigns wait
// together instead, on one reading of all their leases a tick, and try
// again only when theirs is free or about to expire. After what a restart, a failover
// or a busy server produces, it backs off: a quarter of the RenewInterval,
// doubled after each consecutive failure up to two RenewIntervals, with the
// same jitter. Those are an acquisition whose outcome is unknown, an error
// that is not the server's (a dial, a lost connection), and the server's
// SQLSTATE classes 08 (connection), 53 (too many connections, out of
// resources) and 58 (I/O), and 25006 (read-only: a standby, or a failover
// in progress), 40001 and 40P01, 55P03 and 55006, 57014, 57P01, 57P02,
// 57P03 (starting up) and 57P05.
//
// It gives up at once on what retrying cannot fix, and the error says which
// of them it was and wraps the cause: a schema error (ErrSchema; SQLSTATE
// class 42, 3D000, 3F000, 57P04), a permissions error (42501, class 28), an
// isolation or transaction-state error (ErrIsolation, the rest of class
// 25), or another server error; on a closed Manager; and with ctx's error
// when ctx ends.
//
// Every attempt has a deadline of its own: an attempt slower than the TTL
// ends only that attempt (an acquisition it confirmed too late is
// released), and the next term's context starts afresh. Once acquired, it
// renews and runs fn as Hold does, and returns as Hold does; to lead again
// after a loss, call it again.
func (m *Manager) Campaign(ctx context.Context, fn func(ctx context.Context, t *Term) error) error {
	return m.hold(ctx, true, fn)
}

func (m *Manager) hold(ctx context.Context, campaign bool, fn func(ctx context.Context, t *Term) error) error {
	if err := m.check(); err != nil {
		return err
	}
	failures := 0 // consecutive attempts that failed for want of a database
	for {
		// 1. Acquire. A term's deadline belongs to that term: it starts
		// before the acquisition is sent (the lease lives at least a TTL
		// from then) and ends with the attempt if it fails, so that a
		// slow attempt cannot end the next one's term. A Client's
		// Managers first wait their turn among its acquisitions, so that
		// a term's deadline does not run out in the queue for the pool.
		done, err := m.acquireTurn(ctx)
		if err != nil {
			return fmt.Errorf("acquire lease %q: %w", m.cfg.Name, err)
		}
		t, leaseCtx, cancel, deadline, expire := m.newTerm(ctx)
		l, err := m.Acquire(ctx)
		done()
		if err != nil {
			deadline.Stop()
			cancel(nil)
			if !campaign || ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return err
			}
			if kind := notRetried(err); kind != "" {
				m.logCampaign(err, failures, kind)
				return fmt.Errorf("campaign for lease %q: %s, which retrying cannot fix: %w", m.cfg.Name, kind, err)
			}
			wait := m.waitForHolder
			if errors.Is(err, ErrLeaseHeld) || errors.Is(err, ErrTakeoverBlocked) {
				failures = 0
			} else {
				failures++
				wait = func(ctx context.Context) error { return m.backoff(ctx, failures) }
			}
			m.logCampaign(err, failures, "")
			if err := wait(ctx); err != nil {
				return fmt.Errorf("campaign for lease %q: %w", m.cfg.Name, err)
			}
			continue
		}
		if !t.start(l) {
			// The acquisition was confirmed only after its deadline: the
			// lease could have expired before this process heard of it.
			// Give it up, and acquire again if campaigning.
			cancel(nil)
			_ = m.releaseBounded(ctx, l) // a lease already lost is the outcome wanted
			if !campaign {
				return fmt.Errorf("acquire lease %q: %w", m.cfg.Name, m.unconfirmed())
			}
			continue
		}
		return m.runTerm(ctx, leaseCtx, cancel, t, deadline, expire, fn)
	}
}

// newTerm prepares a term before its acquisition is sent: its context, and
// its deadline, a timer of the TTL less the stop margin that calls expire. expire cancels the
// context, and tells the observer of a loss once the term has started.
func (m *Manager) newTerm(ctx context.Context) (t *Term, leaseCtx context.Context, cancel context.CancelCauseFunc, deadline *time.Timer, expire func()) {
	t = &Term{m: m}
	t.lease.Store(&Lease{Name: m.cfg.Name, Holder: m.cfg.Holder})
	t.confirmed.Store(sentNow())
	leaseCtx, cancel = context.WithCancelCause(ctx)
	expire = func() {
		err := m.unconfirmed()
		if !t.state.CompareAndSwap(termAcquiring, termExpired) {
			m.observe(Lost, t.Lease(), err)
		}
		cancel(err)
	}
	return t, leaseCtx, cancel, time.AfterFunc(m.cfg.workFor(), expire), expire
}

// The states of a term: acquiring until its acquisition is confirmed,
// then started; expired if its deadline came first.
const (
	termAcquiring int32 = iota
	termStarted
	termExpired
)

// start records t's lease and starts the term, unless its deadline passed
// while it was being acquired.
func (t *Term) start(l Lease) bool {
	t.lease.Store(&l)
	return t.state.CompareAndSwap(termAcquiring, termStarted)
}

// runTerm renews t's lease and runs fn while it holds, then releases it.
func (m *Manager) runTerm(ctx, leaseCtx context.Context, cancel context.CancelCauseFunc, t *Term, deadline *time.Timer, expire func(), fn func(ctx context.Context, t *Term) error) error {
	defer cancel(nil)

	// 2. Renew in the background until fn returns or the lease is lost:
	// on the Manager's own loop, or in its Client's batch.
	stopRenewing := m.startRenewing(leaseCtx, t, deadline, expire, cancel)

	// 3. Run fn, then stop renewing. Healthy looks at the term meanwhile.
	done := m.leading(t, leaseCtx)
	fnErr := fn(leaseCtx, t)
	done()
	stopRenewing()

	// 4. A lost lease is the answer, whatever fn made of its cancellation.
	if cause := context.Cause(leaseCtx); errors.Is(cause, ErrLeaseLost) {
		return cause
	}

	// 5. Release, even if ctx was cancelled, within a TTL.
	if err := m.releaseBounded(ctx, t.Lease()); err != nil && fnErr == nil {
		return err
	}
	return fnErr
}

// releaseBounded releases l on a context that outlives ctx's cancellation
// and is bounded by the TTL.
func (m *Manager) releaseBounded(ctx context.Context, l Lease) error {
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.TTL)
	defer rcancel()
	return m.Release(rctx, l)
}

func (m *Manager) unconfirmed() error {
	return fmt.Errorf("lease %q: no renewal confirmed within %v, the ttl %v less the stop margin %v: %w", m.cfg.Name, m.cfg.workFor(), m.cfg.TTL, m.cfg.stopMargin(), ErrLeaseLost)
}

// renewLoop renews t's lease on schedule. deadline calls expire when the
// lease could have expired; each confirmed renewal replaces it with a timer
// started when that renewal was sent. A renewal that finds the lease lost
// ends the term through lose (Renew has told the observer).
func (m *Manager) renewLoop(ctx context.Context, stop <-chan struct{}, t *Term, deadline *time.Timer, expire func(), lose context.CancelCauseFunc) {
	ticker := time.NewTicker(m.cfg.RenewInterval)
	defer ticker.Stop()
	defer func() { deadline.Stop() }()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		next := time.AfterFunc(m.cfg.workFor(), expire)
		// ctx ends when the current deadline fires, so a renewal never runs
		// past the time the lease could have expired; RenewInterval bounds
		// one attempt so that a stalled one leaves room for the next.
		rctx, rcancel := context.WithTimeout(ctx, m.cfg.RenewInterval)
		sent := sentNow()
		l, err := m.Renew(rctx, t.Lease())
		rcancel()
		switch {
		case err == nil:
			deadline.Stop()
			deadline = next
			t.lease.Store(&l)
			t.confirmed.Store(sent)
		case errors.Is(err, ErrLeaseLost):
			next.Stop()
			lose(err)
			return
		default:
			next.Stop()
			if ctx.Err() != nil {
				return
			}
			m.observe(RenewFailed, t.Lease(), err)
		}
	}
}

// notRetried says why a campaign gives up after err, or "" if it tries
// again. It tries again after whatever a restart, a failover or a busy
// server produces, and gives up only on what waiting cannot fix: the
// schema (a missing table or column, a database or schema that does not
// exist), permissions, and the isolation level. (A closed Manager and the
// end of the campaign's context end it before it asks.)
func notRetried(err error) string {
	switch {
	case errors.Is(err, ErrSchema):
		return "a schema error"
	case errors.Is(err, ErrIsolation):
		return "an isolation error"
	case errors.Is(err, ErrLeaseHeld), errors.Is(err, ErrTakeoverBlocked), errors.Is(err, ErrOutcomeUnknown):
		return ""
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return "" // the network, a dial, a pool: the database cannot be reached
	}
	code := pgErr.Code
	switch {
	case transientCode(code):
		return ""
	case code == "42501" || strings.HasPrefix(code, "28"):
		return "a permissions error (SQLSTATE " + code + ")"
	case strings.HasPrefix(code, "42") || code == "3D000" || code == "3F000" || code == "57P04":
		return "a schema error (SQLSTATE " + code + ")"
	case strings.HasPrefix(code, "25"):
		return "an isolation or transaction-state error (SQLSTATE " + code + ")"
	}
	return "a server error that is not transient (SQLSTATE " + code + ")"
}

// transientCode says whether a server error with SQLSTATE code is one that
// a restart, a failover or a busy server produces, and that a later
// attempt can get past.
func transientCode(code string) bool {
	switch code {
	case "25006", // read_only_sql_transaction: a standby, or a primary being demoted
		"40001", "40P01", // serialization_failure, deadlock_detected
		"55P03", "55006", // lock_not_available, object_in_use
		"57014",                            // query_canceled: a statement_timeout, a cancel
		"57P01", "57P02", "57P03", "57P05": // admin or crash shutdown, cannot_connect_now (starting up), idle_session_timeout
		return true
	}
	return strings.HasPrefix(code, "08") || // connection_exception
		strings.HasPrefix(code, "53") || // insufficient_resources: too many connections, disk full, out of memory
		strings.HasPrefix(code, "58") // system_error: an I/O error
}

// backoff waits after the n-th consecutive attempt that failed for want of
// a database: a quarter of the RenewInterval doubled for each, at most two
// RenewIntervals, jittered between half and one and a half times that so
// that contenders coming back together spread out; or until ctx is done.
func (m *Manager) backoff(ctx context.Context, n int) error {
	d := max(m.cfg.RenewInterval/4, time.Millisecond)
	for i := 1; i < n && d < 2*m.cfg.RenewInterval; i++ {
		d *= 2
	}
	d = min(d, 2*m.cfg.RenewInterval)
	return sleep(ctx, d/2+rand.N(d))
}

// waitForHolder waits a jittered RenewInterval, or less if the lease
// expires sooner by the database's clock, or until ctx is done. A
// Client's Manager waits until the Client's reading of all the leases its
// campaigns wait for says this one is free or about to be (waitWatched).
func (m *Manager) waitForHolder(ctx context.Context) error {
	if m.client != nil {
		return m.waitWatched(ctx)
	}
	wait := m.cfg.RenewInterval/2 + rand.N(m.cfg.RenewInterval)
	if info, err := m.Leader(ctx); err == nil && info.Held && info.Remaining < wait {
		wait = info.Remaining + rand.N(m.cfg.RenewInterval/4+1)
	}
	return sleep(ctx, wait)
}

// sleep waits d, or until ctx is done and returns its cause.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
