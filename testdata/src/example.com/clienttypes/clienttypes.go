// Package clienttypes names *http.Client in declarations only: it neither
// builds, reads nor calls one.
package clienttypes

import "net/http"

// Options would configure a client that another package makes.
type Options struct {
	Client *http.Client
	Header http.Header
}

// Caller is what calls a client.
type Caller func(*http.Client) error
