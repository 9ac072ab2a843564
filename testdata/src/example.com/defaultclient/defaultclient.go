// Package defaultclient hands out the process's default HTTP client.
package defaultclient

import "net/http"

// Client returns the client to call with.
func Client() *http.Client { return http.DefaultClient }
