// want package:"reaches github.com/gorilla/websocket via imports/wsserver; golang.org/x/net/http2 via imports/wsserver; golang.org/x/net/websocket via imports/wsserver; nhooyr.io/websocket via imports/wsserver"
//leaseguard:lease

// Package wsserver serves the lease's state to watchers over websockets
// and HTTP/2, and connects to no one: a server is not reported unless
// -imports.strict is set.
package wsserver

import (
	"context"
	"net"

	"example.com/wsserve"            // ok: serves, dials nothing
	"github.com/gorilla/websocket"   // ok: an upgrader
	"golang.org/x/net/http2"         // ok: a framer on an accepted connection
	xws "golang.org/x/net/websocket" // ok: a server
	nws "nhooyr.io/websocket"        // ok: an accept
)

var _ = wsserve.Accept

var upgrader = websocket.Upgrader{}

func watch(w, r any, holder string) error {
	c, err := upgrader.Upgrade(w, r)
	if err != nil {
		return err
	}
	return c.WriteMessage(websocket.TextMessage, []byte(holder))
}

func watchModern(ctx context.Context, w, r any, holder string) error {
	c, err := nws.Accept(w, r, nil)
	if err != nil {
		return err
	}
	return c.Write(ctx, 1, []byte(holder))
}

func serve(l net.Listener) error {
	conn, err := l.Accept()
	if err != nil {
		return err
	}
	return http2.NewFramer(conn, conn).WriteSettings()
}

// Legacy serves the old protocol.
var Legacy = xws.Server{Handler: func(c *xws.Conn) {}}
