package flows

import (
	"context"
	"testing"
	"time"
)

// A test sets up on purpose the state that the rule forbids (a lease that
// expires by the test's clock): test files are not checked.
func TestRenew(t *testing.T) {
	pool.Exec(context.Background(), renew, "a", time.Now().Add(-time.Minute))
	if time.Now().IsZero() {
		direct(context.Background())
	}
}
