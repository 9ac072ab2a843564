// Package relay passes messages on.
package relay

import "example.com/fast/hop"

// Send sends through the hop.
func Send() error { return hop.Send() }
