// want package:"reaches google.golang.org/grpc via imports/grpcclient; google.golang.org/grpc via imports/grpcclient \\(uses grpc.NewClient\\)"
//leaseguard:lease

// Package grpcclient connects to remote services: itself, and through a
// package that dials and one that calls a generated client's Invoke.
package grpcclient

import (
	"example.com/rpcdial"          // want `lease package imports RPC client google.golang.org/grpc via example.com/rpcdial \(example.com/rpcdial uses grpc.NewClient\): a network call in the write path can veto leadership`
	"example.com/rpcgen"           // want `lease package imports RPC client google.golang.org/grpc via example.com/rpcgen \(example.com/rpcgen uses grpc.ClientConnInterface.Invoke\): a network call`
	"google.golang.org/grpc"       // want `lease package imports RPC client google.golang.org/grpc and uses grpc.NewClient: a network call in the write path can veto leadership`
	"google.golang.org/grpc/codes" // ok: an enum; the use is reported at the grpc import
)

var (
	_ = rpcdial.Connect
	_ = rpcgen.NewLockClient
	_ = codes.OK
)

// Peer connects to the other holder.
func Peer() (*grpc.ClientConn, error) { return grpc.NewClient("peer:443") }
