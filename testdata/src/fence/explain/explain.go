//leaseguard:lease

// Package explain is explained with -lease.explain: a lease table whose
// columns its SQL shows, a table named at run time, calls whose SQL is
// not read, and one whose SQL is read as far as the package's own calls
// choose it.
package explain // want `3 SQL calls read, 3 not`

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func done(tag pgconn.CommandTag, err error) {
	if err == nil && tag.RowsAffected() != 1 {
		panic("lost the lock")
	}
}

const acquireSQL = `UPDATE job_locks
   SET locked_by = $2, fencing_token = fencing_token + 1,
       lease_expires_at = clock_timestamp() + $3 * interval '1 second'
 WHERE job = $1 AND lease_expires_at < clock_timestamp()`

const writeSQL = `INSERT INTO results (job, output) SELECT $1, $4
 WHERE EXISTS (SELECT 1 FROM job_locks WHERE job = $1 AND locked_by = $2 AND fencing_token = $3 AND lease_expires_at > clock_timestamp() FOR SHARE)`

type store struct{ table string }

func (s *store) acquire(ctx context.Context) {
	done(pool.Exec(ctx, acquireSQL, "j", "w", 15))     // want `the lease table job_locks \(inferred from its statements\): holder: .locked_by., epoch: .fencing_token., expiry: .lease_expires_at.`
	done(pool.Exec(ctx, writeSQL, "j", "w", 1, "out")) // want `the guarded table results: a write of the package fences it`
}

// A table named at run time, whose statement does not parse without its
// name's part.
func (s *store) renew(ctx context.Context, rest string) {
	done(pool.Exec(ctx, "UPDATE "+s.table+" SET "+rest, "j")) // want `SQL call not read: a part built at run time leaves it unparsable`
}

// Exec runs the caller's SQL: nothing here says what it is.
func Exec(ctx context.Context, query string) {
	done(pool.Exec(ctx, query)) // want `SQL call not read: its text is the parameter query of Exec, which its callers choose, and the package never calls Exec directly`
}

// Run runs the caller's SQL too, and the package calls it: what those
// calls pass is read, and checked where they pass it.
func Run(ctx context.Context, query string, args ...any) {
	done(pool.Exec(ctx, query, args...)) // want `SQL call read for what the package's own calls of Run pass \(2 of 3 read\): what callers outside the package, or through an interface, pass is not read`
}

func (s *store) release(ctx context.Context) {
	Run(ctx, `UPDATE job_locks SET locked_by = NULL WHERE job = $1 AND locked_by = $2`, "j", "w")
	Run(ctx, `INSERT INTO results (job, output) VALUES ($1, $2)`, "j", "out") // want `INSERT into results is not fenced`
}

func (s *store) purge(ctx context.Context, query string) {
	Run(ctx, query) // want `SQL call not read: the SQL text passed to Run is built at run time, or comes from outside the package`
}
