// Package websocket stands in for golang.org/x/net/websocket: its client
// calls and its server.
package websocket

import "context"

// Conn stands in for websocket.Conn.
type Conn struct{}

// Write stands in for Conn.Write.
func (*Conn) Write(p []byte) (int, error) { return len(p), nil }

// Config stands in for websocket.Config, which clients and servers share.
type Config struct{ Protocol []string }

// NewConfig stands in for websocket.NewConfig: it builds a configuration,
// and connects nowhere.
func NewConfig(server, origin string) (*Config, error) { return &Config{}, nil }

// DialContext stands in for Config.DialContext.
func (*Config) DialContext(ctx context.Context) (*Conn, error) { return &Conn{}, nil }

// Dial stands in for websocket.Dial.
func Dial(url, protocol, origin string) (*Conn, error) { return &Conn{}, nil }

// DialConfig stands in for websocket.DialConfig.
func DialConfig(config *Config) (*Conn, error) { return &Conn{}, nil }

// Handler stands in for websocket.Handler.
type Handler func(*Conn)

// Server stands in for websocket.Server.
type Server struct {
	Config
	Handler Handler
}
