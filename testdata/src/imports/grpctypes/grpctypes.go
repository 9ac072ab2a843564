// want package:"reaches google.golang.org/grpc via imports/grpctypes"
//leaseguard:lease

// Package grpctypes uses gRPC's types, codes and status, directly and
// through another package, and never connects.
package grpctypes

import (
	"example.com/rpcerr"            // ok: gRPC codes, status and keepalive only
	"google.golang.org/grpc"        // ok: a type in a signature, no connection
	"google.golang.org/grpc/codes"  // ok: an enum
	"google.golang.org/grpc/status" // ok: errors that carry a code
)

// Refuse returns the error for a refused write.
func Refuse(_ ...grpc.CallOption) error {
	if rpcerr.Retryable(rpcerr.Lost) {
		return status.Error(codes.Unavailable, "lease lost")
	}
	return nil
}
