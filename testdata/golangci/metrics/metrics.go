// Package metrics serves a handler: net/http as a server only.
package metrics

import "net/http"

// Handler serves nothing much.
func Handler() http.Handler { return http.NotFoundHandler() }
