// want package:"reaches example.com/vendorsdk via imports/extraban"
//leaseguard:lease

// Package extraban imports a package that only a setting bans.
package extraban

import "example.com/vendorsdk" // want `lease package imports banned package example.com/vendorsdk: a network call`

var _ = vendorsdk.Call
