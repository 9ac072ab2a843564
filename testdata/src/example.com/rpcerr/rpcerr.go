// Package rpcerr maps errors to gRPC status codes: gRPC's enums and types,
// no client.
package rpcerr

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// Lost is the status of a lost lease.
var Lost = status.Error(codes.Unavailable, "lost lease")

// Retryable reports whether err's code asks for a retry.
func Retryable(err error) bool { return status.Code(err) == codes.Unavailable }

// Keepalive is the keepalive setting that a client would use.
var Keepalive = keepalive.ClientParameters{Time: time.Minute}
