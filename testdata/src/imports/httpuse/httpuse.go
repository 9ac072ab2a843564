// want package:"reaches net/http via imports/httpuse; net/http via imports/httpuse -> example.com/clientlit \\(uses http.Client\\)"
//leaseguard:lease

// Package httpuse reaches net/http through packages that make calls and
// packages that only build requests or name types.
package httpuse

import (
	"example.com/clientlit"              // want `lease package imports HTTP client net/http via example.com/clientlit \(example.com/clientlit uses http.Client\): a network call in the write path can veto leadership`
	"example.com/clienttypes"            // ok: names *http.Client in declarations only
	"example.com/defaultclient"          // want `lease package imports HTTP client net/http via example.com/defaultclient \(example.com/defaultclient uses http.DefaultClient\): a network call`
	"example.com/inprocess"              // ok: builds a request for a handler in this process
	"github.com/stretchr/testify/assert" // ok: builds requests for in-process handlers with httptest
	"net/http"                           // ok: a handler, no call
)

var (
	_ = clientlit.New
	_ clienttypes.Options
	_ = defaultclient.Client
	_ = inprocess.Status
	_ = assert.HTTPSuccess
	_ http.HandlerFunc
)
