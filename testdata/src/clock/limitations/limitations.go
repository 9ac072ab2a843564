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
