// Package websocket stands in for nhooyr.io/websocket: its Dial and its Accept.
package websocket

import "context"

// Conn stands in for websocket.Conn.
type Conn struct{}

// Write stands in for Conn.Write.
func (*Conn) Write(ctx context.Context, typ int, p []byte) error { return nil }

// DialOptions stands in for websocket.DialOptions.
type DialOptions struct{ Subprotocols []string }

// Dial stands in for websocket.Dial.
func Dial(ctx context.Context, u string, opts *DialOptions) (*Conn, any, error) {
	return &Conn{}, nil, nil
}

// AcceptOptions stands in for websocket.AcceptOptions.
type AcceptOptions struct{ Subprotocols []string }

// Accept stands in for websocket.Accept, which the server calls from its
// handler.
func Accept(w, r any, opts *AcceptOptions) (*Conn, error) { return &Conn{}, nil }
