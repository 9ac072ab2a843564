// Package driver declares a database driver's executor, as River's
// riverdriver.Executor is: an interface with no SQL shape and no
// directive, named by -clock.sql-interfaces in the tests that use it.
package driver

import (
	"context"
	"time"
)

// LeaderElectParams are the arguments of a leader election.
type LeaderElectParams struct {
	LeaderID string
	Name     string
	TTL      time.Duration
	Now      *time.Time
}

// Executor runs the driver's queries.
type Executor interface {
	Begin(ctx context.Context) (ExecutorTx, error)
	LeaderAttemptReelect(ctx context.Context, params *LeaderElectParams) (bool, error)
	LeaderResign(ctx context.Context, params *LeaderElectParams) (bool, error)
}

// ExecutorTx is an Executor in a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
}

// Clock is the driver's time source.
type Clock interface{ Now() time.Time }

// Store is a driver's lease store that embeds the clock it was built
// with, named by -clock.sql-interfaces with Executor: Now is no SQL.
type Store interface {
	Clock
	Release(ctx context.Context, params *LeaderElectParams) error
}
