//leaseguard:lease

// Package generated keeps its SQL in generated files, as sqlc users do:
// generated code holds the SQL the program sends, so it is checked.
package generated

import (
	"context"
	"time"
)

func renew(ctx context.Context, q *Queries) error {
	return q.RenewLease(ctx, "a", time.Now()) // want `time.Now flows into an argument of generated.Queries.RenewLease, which passes it to SQL`
}
