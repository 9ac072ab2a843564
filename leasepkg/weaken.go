//go:build leaseguard_weaken

package leasepkg

import (
	"fmt"
	"strings"
)

// Weaken removes one part of m's fence ([Manager.Fence], and so
// [Manager.Tx]): "lock" its row lock (reopening the READ COMMITTED race),
// "epoch" its epoch test, "idle" the idle timeout and transaction_timeout
// that it sets for the caller's transaction (so that a frozen holder's
// transaction outlives its lease). Call it before m's first write.
//
// It serves the controls that must show a broken lease caught: the fault
// suite's worker (internal/faults/worker), whose stale writes the suite's
// checker must find (or, with the takeover's own lock intact, none), and
// leasepkg's own tests, whose race test must fail without the row lock. It
// is the package's only way to weaken a Manager, and it exists only in
// builds with the leaseguard_weaken tag, which no normal build sets
// (scripts/test.sh sets it for the tests, the fault suite for its weakened
// worker; without it leasepkg's tests skip their negative control, or
// fail when CI is set). In other
// builds a Manager's statements are the constants that New assigns and
// nothing else writes them, which is what leaseguard checks.
func Weaken(m *Manager, part string) error {
	var olds []string
	var weak string
	switch part {
	case "lock":
		olds = []string{"FOR KEY SHARE"}
	case "epoch":
		olds = []string{"AND epoch = $4"}
	case "idle":
		olds, weak = []string{"set_config('idle_in_transaction_session_timeout', $1, true)", fenceTxTimeoutSQL}, "$1::text"
	default:
		return fmt.Errorf("weaken %q: want lock, epoch or idle", part)
	}
	for _, old := range olds {
		w := strings.Replace(m.fenceStmt, old, weak, 1)
		if w == m.fenceStmt {
			return fmt.Errorf("weaken %q: the fence has no %q", part, old)
		}
		m.fenceStmt = w
	}
	return nil
}
