//leaseguard:lease

// Package lease is clean; the pre-commit test adds a model SDK to it.
package lease

import "errors"

// ErrLost means the lease is lost.
var ErrLost = errors.New("lost lease; refuse all writes")
