// Package clientlit builds an HTTP client with a timeout.
package clientlit

import (
	"net/http"
	"time"
)

// New returns a client for others to call with.
func New() *http.Client { return &http.Client{Timeout: 5 * time.Second} }
