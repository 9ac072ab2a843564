// Package wsserve serves websocket and HTTP/2 connections that others
// open: an upgrader, an accept, a framer on an accepted connection, an
// HTTP/2 server. It connects to no one.
package wsserve

import (
	"context"
	"net"

	gorilla "github.com/gorilla/websocket"
	"golang.org/x/net/http2"
	xws "golang.org/x/net/websocket"
	"nhooyr.io/websocket"
)

var upgrader = gorilla.Upgrader{ReadBufferSize: 1024}

// Upgrade upgrades a handler's request.
func Upgrade(w, r any) error {
	c, err := upgrader.Upgrade(w, r)
	if err != nil {
		return err
	}
	return c.WriteMessage(gorilla.TextMessage, []byte("hello"))
}

// Accept accepts a handler's request.
func Accept(ctx context.Context, w, r any) error {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		return err
	}
	return c.Write(ctx, 1, []byte("hello"))
}

// Serve answers HTTP/2 on the connections that l accepts, one with a
// framer of its own.
func Serve(l net.Listener) error {
	conn, err := l.Accept()
	if err != nil {
		return err
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	var s http2.Server
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go s.ServeConn(c, &http2.ServeConnOpts{})
	}
}

// Echo is a websocket handler.
var Echo = xws.Server{Handler: func(c *xws.Conn) { c.Write([]byte("hello")) }}
