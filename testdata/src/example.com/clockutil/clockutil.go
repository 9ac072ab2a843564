// Package clockutil is a helper package outside any lease package.
package clockutil

import "time"

// Now returns the current time in UTC.
func Now() time.Time { return time.Now().UTC() } // want Now:"returns clock from time.Now"

// Deadline returns when d from now is.
func Deadline(d time.Duration) time.Time { return time.Now().Add(d) } // want Deadline:"returns clock from time.Now"

// Parse reads a time from text: not a clock read.
func Parse(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
