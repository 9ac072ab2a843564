// Package rpcdial connects to a remote service with grpc.NewClient.
package rpcdial

import "google.golang.org/grpc"

// Connect connects to target.
func Connect(target string) (*grpc.ClientConn, error) { return grpc.NewClient(target) }
