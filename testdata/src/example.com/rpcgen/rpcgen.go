// Package rpcgen has the shape of a generated gRPC client: it calls Invoke
// on the connection it is given.
package rpcgen

import (
	"context"

	"google.golang.org/grpc"
)

// LockClient is a generated client.
type LockClient struct{ cc grpc.ClientConnInterface }

// NewLockClient wraps cc.
func NewLockClient(cc grpc.ClientConnInterface) *LockClient { return &LockClient{cc} }

// Acquire calls the remote Acquire.
func (c *LockClient) Acquire(ctx context.Context, name string) error {
	var reply string
	return c.cc.Invoke(ctx, "/lock.Lock/Acquire", name, &reply)
}
