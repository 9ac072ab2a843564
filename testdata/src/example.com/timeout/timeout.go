// Package timeout runs a function under a deadline, as River's
// timeoututil does: it knows nothing of SQL, the function it is given runs
// the queries.
package timeout

import (
	"context"
	"time"
)

// WithTimeoutV runs fn with a context that ends after d, and returns what
// fn returns.
func WithTimeoutV[T any](ctx context.Context, d time.Duration, name string, fn func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(ctx)
}
