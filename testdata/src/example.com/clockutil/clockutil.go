// Package clockutil is a helper package outside any lease package.
package clockutil

import "time"

// Now returns the current time in UTC.
func Now() time.Time { return time.Now().UTC() } // want Now:"returns clock from time.Now"

// Deadline returns when d from now is.
func Deadline(d time.Duration) time.Time { return time.Now().Add(d) } // want Deadline:"returns clock from time.Now"

// Parse reads a time from text: not a clock read.
func Parse(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// Stamp returns the current time as Unix seconds.
func Stamp() int64 { return time.Now().Unix() } // want Stamp:"returns clock from time.Now"

// Scheduler runs jobs on a timetable, as cron.New's *Cron does.
type Scheduler struct {
	started time.Time
}

// NewScheduler returns a Scheduler that remembers when it started: an
// object that holds a time among its fields, not a time, and no fact.
func NewScheduler() *Scheduler { return newScheduler(time.Now()) }

func newScheduler(started time.Time) *Scheduler { return &Scheduler{started: started} }

// ID identifies a row, as a ULID does.
type ID [16]byte

// NewID returns an identifier whose first bytes are the time ms: an
// identifier, not a time.
func NewID(ms int64) ID {
	var id ID
	for i := range 8 {
		id[i] = byte(ms >> (56 - 8*i))
	}
	return id
}
