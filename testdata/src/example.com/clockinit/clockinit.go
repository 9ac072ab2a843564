// Package clockinit sets a variable from the clock when it is initialised,
// through a function of its own: its initial values name no clock read.
package clockinit

import "time"

var booted = now()

func now() time.Time { return time.Now() }

// Booted returns when the package was initialised.
func Booted() time.Time { return booted } // want Booted:"returns clock from time.Now"
