// Package dbhandle declares interfaces that a lease package writes
// through, implemented in packages it does not import, and named by no
// setting: Executor and Repo are database handles by their own methods,
// Backend is not.
package dbhandle

import (
	"context"
	"database/sql"
	"time"
)

// Params are the arguments of a reelection.
type Params struct {
	Name string
	Now  time.Time
}

// Member is one row of a membership table.
type Member struct {
	Host   string
	Expiry time.Time
}

// Executor is a driver's executor, as River's riverdriver.Executor: it
// runs raw SQL beside its named queries.
type Executor interface {
	Exec(ctx context.Context, sql string, args ...any) error
	LeaderAttemptReelect(ctx context.Context, params *Params) (bool, error)
	Now() time.Time
}

// Repo is a repository whose writes return the database's result, as
// Temporal's sqlplugin.DB.
type Repo interface {
	UpsertMember(ctx context.Context, m *Member) (sql.Result, error)
	Members(ctx context.Context, after time.Time) ([]Member, error)
}

// Backend is a key-value store's interface, as kine's server.Backend:
// nothing in it says that a database is behind it.
type Backend interface {
	Delete(ctx context.Context, key string, revision int64) error
}

// Queries runs some of its statements on the transaction it is given, as
// Argo's SyncQueries takes upper/db's session.
type Queries interface {
	UpdateTimestamp(ctx context.Context, name string, at time.Time) error
	Held(ctx context.Context, tx *sql.Tx, name string) (bool, error)
}

// Pilot runs its statements on the executor it is given, itself an
// interface that is a database handle by its own methods, as River's
// riverpilot.Pilot takes riverdriver.ExecutorTx.
type Pilot interface {
	PeriodicJobUpsert(ctx context.Context, tx Executor, params *Params) error
}

// Notifier is given an interface that is no database handle (Backend):
// nothing says that it writes to a database.
type Notifier interface {
	Notify(ctx context.Context, b Backend, at time.Time) error
}
