// Package metrics serves counters; it uses net/http only as a server.
package metrics

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// Renewals counts renewals.
var Renewals atomic.Int64

// Handler serves the counters.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "renewals %d\n", Renewals.Load())
	})
}
