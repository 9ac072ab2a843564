//go:build leaseguard_weaken

package leasepkg

import (
	"fmt"
	"strings"
)

// Weaken removes one part of m's fence: "lock" its row lock (reopening the
// READ COMMITTED race), "epoch" its epoch test, "idle" the idle timeout that
// AppendOrderTx sets for the caller's transaction (so that a frozen holder's
// transaction outlives its lease). It serves the fault suite's controls,
// which must show its checker catching the stale writes that follow (or,
// with the takeover's own lock intact, none), and exists only in builds
// with the leaseguard_weaken tag.
func Weaken(m *Manager, part string) error {
	var old, weak string
	stmts := []*string{&m.appendSQL, &m.appendBatchSQL}
	switch part {
	case "lock":
		old = "FOR KEY SHARE"
	case "epoch":
		old = "AND epoch = $3"
	case "idle":
		old, weak = "set_config('idle_in_transaction_session_timeout', $1, true)", "$1"
		stmts = []*string{&m.sessionSQL}
	default:
		return fmt.Errorf("weaken %q: want lock, epoch or idle", part)
	}
	for _, s := range stmts {
		w := strings.Replace(*s, old, weak, 1)
		if w == *s {
			return fmt.Errorf("weaken %q: the fence has no %q", part, old)
		}
		*s = w
	}
	return nil
}
