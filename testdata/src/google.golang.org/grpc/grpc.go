// Package grpc stands in for google.golang.org/grpc: a client connection
// and the server-side types.
package grpc

import "context"

// CallOption stands in for grpc.CallOption.
type CallOption interface{ call() }

// DialOption stands in for grpc.DialOption.
type DialOption interface{ dial() }

// ClientConn stands in for grpc.ClientConn.
type ClientConn struct{ target string }

// NewClient stands in for grpc.NewClient.
func NewClient(target string, _ ...DialOption) (*ClientConn, error) { return &ClientConn{target}, nil }

// Dial stands in for grpc.Dial.
func Dial(target string, _ ...DialOption) (*ClientConn, error) { return &ClientConn{target}, nil }

// Invoke stands in for ClientConn.Invoke: a unary call.
func (*ClientConn) Invoke(context.Context, string, any, any, ...CallOption) error { return nil }

// Close stands in for ClientConn.Close.
func (*ClientConn) Close() error { return nil }

// ClientConnInterface stands in for the interface that generated clients call.
type ClientConnInterface interface {
	Invoke(ctx context.Context, method string, args, reply any, opts ...CallOption) error
}

// Server stands in for grpc.Server.
type Server struct{}

// NewServer stands in for grpc.NewServer.
func NewServer() *Server { return &Server{} }
