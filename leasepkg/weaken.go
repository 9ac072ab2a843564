//go:build leaseguard_weaken

package leasepkg

import (
	"fmt"
	"strings"
)

// Weaken removes one part of m's fence: "lock" its row lock (reopening the
// READ COMMITTED race), "epoch" its epoch test. It is the fault suite's
// negative control, which must show its checker catching the stale writes
// that follow, and exists only in builds with the leaseguard_weaken tag.
func Weaken(m *Manager, part string) error {
	var old string
	switch part {
	case "lock":
		old = "FOR KEY SHARE"
	case "epoch":
		old = "AND epoch = $3"
	default:
		return fmt.Errorf("weaken %q: want lock or epoch", part)
	}
	for _, s := range []*string{&m.appendSQL, &m.appendBatchSQL} {
		weak := strings.Replace(*s, old, "", 1)
		if weak == *s {
			return fmt.Errorf("weaken %q: the fence has no %q", part, old)
		}
		*s = weak
	}
	return nil
}
