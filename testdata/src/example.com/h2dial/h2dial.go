// Package h2dial speaks HTTP/2 frames over a connection it dials.
package h2dial

import (
	"net"

	"golang.org/x/net/http2"
)

// Ping opens a connection to addr and sends the preface and settings.
func Ping(addr string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return err
	}
	return http2.NewFramer(conn, conn).WriteSettings()
}
