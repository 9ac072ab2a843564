// want package:"reaches github.com/coder/websocket via imports/wsclient -> example.com/wsdial; github.com/gorilla/websocket via imports/wsclient; golang.org/x/net/http2 via imports/wsclient; golang.org/x/net/websocket via imports/wsclient; nhooyr.io/websocket via imports/wsclient; golang.org/x/net/http2 via imports/wsclient \\(uses http2.NewFramer\\); github.com/gorilla/websocket via imports/wsclient \\(uses websocket.Dialer.DialContext\\)"
//leaseguard:lease

// Package wsclient reaches other services through HTTP clients that are
// not net/http's and websocket dialers: its own, and through packages
// that dial; and a package that only serves them.
package wsclient

import (
	"context"
	"net"

	"example.com/h2dial"             // want `lease package imports HTTP client golang.org/x/net/http2 via example.com/h2dial \(example.com/h2dial uses http2.NewFramer\): a network call in the write path can veto leadership`
	"example.com/wsdial"             // want `lease package imports websocket client github.com/coder/websocket via example.com/wsdial \(example.com/wsdial uses websocket.Dial\): a network call in the write path can veto leadership`
	"example.com/wsserve"            // ok: serves websocket and HTTP/2 connections, dials none
	"github.com/gorilla/websocket"   // want `lease package imports websocket client github.com/gorilla/websocket and uses websocket.Dialer.DialContext: a network call in the write path can veto leadership`
	"golang.org/x/net/http2"         // want `lease package imports HTTP client golang.org/x/net/http2 and uses http2.NewFramer: a network call in the write path can veto leadership`
	xws "golang.org/x/net/websocket" // want `lease package imports websocket client golang.org/x/net/websocket and uses websocket.Dial: a network call in the write path can veto leadership`
	nws "nhooyr.io/websocket"        // want `lease package imports websocket client nhooyr.io/websocket and uses websocket.Dial: a network call in the write path can veto leadership`
)

var (
	_ = h2dial.Ping
	_ = wsdial.Notify
	_ = wsserve.Upgrade
)

// announce tells the peer who holds the lease, over a websocket.
func announce(ctx context.Context, holder string) error {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://peer/lease", nil)
	if err != nil {
		return err
	}
	return c.WriteMessage(websocket.TextMessage, []byte(holder))
}

// push sends the holder over HTTP/2 frames on a connection it dials.
func push(addr string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	fr := http2.NewFramer(conn, conn)
	return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true})
}

func legacy(holder string) error {
	c, err := xws.Dial("ws://peer/lease", "", "http://self")
	if err != nil {
		return err
	}
	_, err = c.Write([]byte(holder))
	return err
}

func modern(ctx context.Context, holder string) error {
	c, _, err := nws.Dial(ctx, "ws://peer/lease", nil)
	if err != nil {
		return err
	}
	return c.Write(ctx, 1, []byte(holder))
}
