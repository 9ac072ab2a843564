package text

import (
	"context"
	"testing"
)

// ok: tests set up the states the rule forbids, directly or through the
// package's helpers.
func TestSetup(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	s.run(ctx, `INSERT INTO orders (payload) VALUES ($1)`, "x")
	done(pool.Exec(ctx, `DELETE FROM worker_leases`))
}
