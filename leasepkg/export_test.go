package leasepkg

import "strings"

// WithoutRowLock strips FOR KEY SHARE from m's fenced statements, reopening
// the READ COMMITTED race that the lock closes: the negative control that
// shows the race tests can fail.
func WithoutRowLock(m *Manager) {
	for _, s := range []*string{&m.appendSQL, &m.appendBatchSQL} {
		weak := strings.Replace(*s, "FOR KEY SHARE", "", 1)
		if weak == *s {
			panic("fenced statement has no FOR KEY SHARE to remove")
		}
		*s = weak
	}
}

// OutcomeError is outcomeError, for tests of errors the server cannot be
// made to send.
var OutcomeError = outcomeError
