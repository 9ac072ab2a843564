//leaseguard:lease

// Package limitations holds flows that the clock rule knowingly does not
// follow. Each would be a finding; none is reported. A change that starts
// reporting one should move it to flows with a want.
package limitations

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

func fill(t *time.Time) { *t = time.Now() }

// A clock written through a pointer parameter by another function: facts
// say what a function returns and which parameters reach SQL, not what it
// writes through its parameters.
func outParam(ctx context.Context) {
	var t time.Time
	fill(&t)
	pool.Exec(ctx, `UPDATE t SET at = $1`, t) // missed
}

type row struct {
	name   string
	expiry time.Time
}

// store is a query interface of the package's own.
//
//leaseguard:sql
type store interface { // want store:"executes SQL"
	upsert(ctx context.Context, r *row) error
}

func newRow(name string) *row { return &row{name: name, expiry: time.Now()} }

// A struct passed whole carries what its fields were set from in the
// function that passes it, not in the function that built it.
func builtElsewhere(ctx context.Context, st store) {
	st.upsert(ctx, newRow("a")) // missed
}
