//leaseguard:lease

// Package literals runs its SQL inside function literals that it passes to
// another package's function, which is expected to run them, as River's
// elector does with timeoututil.WithTimeoutV: the call executes SQL, and
// what the literal captures from its function's parameters reaches it.
// driver.Executor is named by -clock.sql-interfaces.
package literals

import (
	"context"
	"sort"
	"time"

	"example.com/driver"
	"example.com/timeout"
)

// Clock is an injected clock.
type Clock interface{ Now() time.Time }

type elector struct {
	exec       driver.Executor
	clock      Clock
	trustUntil time.Time
}

func attemptReelect(ctx context.Context, exec driver.Executor, params *driver.LeaderElectParams, d time.Duration) (bool, error) {
	return timeout.WithTimeoutV(ctx, d, "reelect", func(ctx context.Context) (bool, error) {
		return exec.LeaderAttemptReelect(ctx, params)
	})
}

// attemptElect begins a transaction, an ExecutorTx that embeds Executor,
// and runs Executor's methods on it.
func attemptElect(ctx context.Context, exec driver.Executor, params *driver.LeaderElectParams) (bool, error) {
	return timeout.WithTimeoutV(ctx, time.Second, "elect", func(ctx context.Context) (bool, error) {
		tx, err := exec.Begin(ctx)
		if err != nil {
			return false, err
		}
		ok, err := tx.LeaderAttemptReelect(ctx, params)
		if err != nil {
			return false, err
		}
		return ok, tx.Commit(ctx)
	})
}

func (e *elector) reelect(ctx context.Context, params *driver.LeaderElectParams) (bool, error) {
	started := e.clock.Now() // want `literals.Clock.Now decides whether literals.attemptReelect runs`
	d := e.trustUntil.Sub(started)
	if d <= 0 {
		return false, nil
	}
	return attemptReelect(ctx, e.exec, params, d)
}

func (e *elector) elect(ctx context.Context, name string) (bool, error) {
	now := time.Now() // want `time.Now flows into an argument of literals.attemptElect, which passes it to SQL`
	return attemptElect(ctx, e.exec, &driver.LeaderElectParams{Name: name, Now: &now})
}

func (e *elector) inline(ctx context.Context, params *driver.LeaderElectParams) (bool, error) {
	if time.Until(e.trustUntil) <= 0 { // want `time.Until decides whether driver.Executor.LeaderResign runs`
		return false, nil
	}
	return timeout.WithTimeoutV(ctx, time.Second, "resign", func(ctx context.Context) (bool, error) {
		return e.exec.LeaderResign(ctx, params)
	})
}

// A parameter that a helper puts in a struct of its own, which a literal
// it passes on hands to the executor, as River's job rescuer does with
// its stuck horizon.
func (e *elector) getStuck(ctx context.Context, horizon time.Time) (bool, error) {
	params := &driver.LeaderElectParams{Name: "stuck", Now: &horizon}
	return timeout.WithTimeoutV(ctx, time.Second, "stuck", func(ctx context.Context) (bool, error) {
		return e.exec.LeaderResign(ctx, params)
	})
}

func (e *elector) rescue(ctx context.Context, params *driver.LeaderElectParams) (bool, error) {
	return e.exec.LeaderResign(ctx, params)
}

func (e *elector) rescuer(ctx context.Context) error {
	horizon := time.Now().Add(-time.Hour) // want `time.Now flows into an argument of literals.elector.getStuck, which passes it to SQL`
	if _, err := e.getStuck(ctx, horizon); err != nil {
		return err
	}
	now := time.Now().UTC() // want `time.Now flows into an argument of literals.elector.rescue, which passes it to SQL`
	params := driver.LeaderElectParams{Name: "rescue"}
	params.Now = &now
	_, err := e.rescue(ctx, &params)
	return err
}

// Not reported.

// The literal runs no SQL: a clock deciding whether it is passed decides
// no write.
func (e *elector) noSQL(ctx context.Context, names []string) (int, error) {
	if time.Until(e.trustUntil) <= 0 { // ok: the literal only sorts
		return 0, nil
	}
	return timeout.WithTimeoutV(ctx, time.Second, "sort", func(ctx context.Context) (int, error) {
		sort.Strings(names)
		return len(names), nil
	})
}

// The clock decides only the deadline the literal runs under, which
// schedules.
func (e *elector) deadline(ctx context.Context, params *driver.LeaderElectParams) (bool, error) {
	return attemptReelect(ctx, e.exec, params, time.Until(e.trustUntil)) // ok: a timeout schedules
}
