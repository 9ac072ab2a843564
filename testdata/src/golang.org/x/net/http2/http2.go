// Package http2 stands in for golang.org/x/net/http2: its client
// transport, the framer that speaks the protocol over a connection, and
// the server.
package http2

import (
	"io"
	"net"
)

// Transport stands in for http2.Transport.
type Transport struct{ AllowHTTP bool }

// NewClientConn stands in for Transport.NewClientConn.
func (*Transport) NewClientConn(c net.Conn) (*ClientConn, error) { return &ClientConn{}, nil }

// ClientConn stands in for http2.ClientConn.
type ClientConn struct{}

// Framer stands in for http2.Framer: it reads and writes frames on a
// connection, either end's.
type Framer struct{ w io.Writer }

// NewFramer stands in for http2.NewFramer.
func NewFramer(w io.Writer, r io.Reader) *Framer { return &Framer{w: w} }

// HeadersFrameParam stands in for http2.HeadersFrameParam.
type HeadersFrameParam struct {
	StreamID      uint32
	BlockFragment []byte
	EndStream     bool
	EndHeaders    bool
}

// WriteHeaders stands in for Framer.WriteHeaders.
func (*Framer) WriteHeaders(p HeadersFrameParam) error { return nil }

// WriteSettings stands in for Framer.WriteSettings.
func (*Framer) WriteSettings() error { return nil }

// ReadFrame stands in for Framer.ReadFrame.
func (*Framer) ReadFrame() (any, error) { return nil, nil }

// Server stands in for http2.Server.
type Server struct{ MaxConcurrentStreams uint32 }

// ServeConnOpts stands in for http2.ServeConnOpts.
type ServeConnOpts struct{}

// ServeConn stands in for Server.ServeConn.
func (*Server) ServeConn(c net.Conn, opts *ServeConnOpts) {}

// ClientPreface stands in for http2.ClientPreface.
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
