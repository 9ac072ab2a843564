// want package:"reaches google.golang.org/grpc/codes via imports/strict -> example.com/rpcerr; net/http via imports/strict"
//leaseguard:lease

// Package strict reaches net/http only through a metrics handler and for a
// handler type of its own, and gRPC only for status codes, and is checked in
// strict mode.
package strict

import (
	"net/http" // want `lease package imports HTTP client net/http: a network call in the write path can veto leadership`

	"example.com/metrics" // want `lease package imports HTTP client net/http via example.com/metrics: a network call`
	"example.com/rpcerr"  // want `lease package imports RPC client google.golang.org/grpc/codes via example.com/rpcerr: a network call`
)

var (
	_ = metrics.Handler
	_ = rpcerr.Retryable
	_ http.HandlerFunc
)
