// want package:"reaches net/http via imports/strict -> example.com/metrics"
//leaseguard:lease

// Package strict reaches net/http only through a metrics handler, and is
// checked in strict mode.
package strict

import "example.com/metrics" // want `lease package imports HTTP client net/http via example.com/metrics: a network call`

var _ = metrics.Handler
