// Package wsdial connects to a remote service over a websocket.
package wsdial

import (
	"context"

	"github.com/coder/websocket"
)

// Notify sends msg to the service at url.
func Notify(ctx context.Context, url string, msg []byte) error {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return err
	}
	return c.Write(ctx, 1, msg)
}
