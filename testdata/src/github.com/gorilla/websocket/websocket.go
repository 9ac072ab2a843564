// Package websocket stands in for github.com/gorilla/websocket: its
// dialer and its upgrader.
package websocket

import (
	"context"
	"net"
	"time"
)

// Conn stands in for websocket.Conn.
type Conn struct{}

// WriteMessage stands in for Conn.WriteMessage.
func (*Conn) WriteMessage(messageType int, data []byte) error { return nil }

// TextMessage stands in for websocket.TextMessage.
const TextMessage = 1

// Dialer stands in for websocket.Dialer.
type Dialer struct{ HandshakeTimeout time.Duration }

// Dial stands in for Dialer.Dial.
func (*Dialer) Dial(url string, header map[string][]string) (*Conn, any, error) {
	return &Conn{}, nil, nil
}

// DialContext stands in for Dialer.DialContext.
func (*Dialer) DialContext(ctx context.Context, url string, header map[string][]string) (*Conn, any, error) {
	return &Conn{}, nil, nil
}

// DefaultDialer stands in for websocket.DefaultDialer.
var DefaultDialer = &Dialer{}

// NewClient stands in for websocket.NewClient: a client handshake over a
// connection.
func NewClient(c net.Conn, url string) (*Conn, any, error) { return &Conn{}, nil, nil }

// Upgrader stands in for websocket.Upgrader.
type Upgrader struct{ ReadBufferSize int }

// Upgrade stands in for Upgrader.Upgrade, which the server calls from its
// handler.
func (*Upgrader) Upgrade(w, r any) (*Conn, error) { return &Conn{}, nil }
