//leaseguard:lease

// Package lease is found by its directive, not by a setting.
package lease

import "example.com/fast/relay"

// Renew tells the relay.
func Renew() error { return relay.Send() }
