// Package hop passes messages on.
package hop

import "example.com/fast/client"

// Send sends through the client.
func Send() error { return client.Post() }
