// want package:"reaches net/http via imports/serveronly -> example.com/metrics"
//leaseguard:lease

// Package serveronly reaches net/http only through a metrics handler.
package serveronly

import "example.com/metrics" // ok: no client use on the chain

var _ = metrics.Handler
