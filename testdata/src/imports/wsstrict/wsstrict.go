// want package:"reaches github.com/gorilla/websocket via imports/wsstrict; golang.org/x/net/http2 via imports/wsstrict -> example.com/wsserve; golang.org/x/net/websocket via imports/wsstrict -> example.com/wsserve; nhooyr.io/websocket via imports/wsstrict -> example.com/wsserve"
//leaseguard:lease

// Package wsstrict serves websocket connections, itself and through a
// package, and is checked in strict mode: a websocket library or http2 is
// reported whether it dials or serves.
package wsstrict

import (
	"example.com/wsserve"          // want `lease package imports HTTP client golang.org/x/net/http2 via example.com/wsserve: a network call` `lease package imports websocket client github.com/gorilla/websocket via example.com/wsserve: a network call` `lease package imports websocket client golang.org/x/net/websocket via example.com/wsserve: a network call` `lease package imports websocket client nhooyr.io/websocket via example.com/wsserve: a network call`
	"github.com/gorilla/websocket" // want `lease package imports websocket client github.com/gorilla/websocket: a network call in the write path can veto leadership`
)

var (
	_ = wsserve.Accept
	_ websocket.Upgrader
)
