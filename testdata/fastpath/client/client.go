// Package client calls out over HTTP.
package client

import "net/http"

// Post makes a network call.
func Post() error {
	resp, err := http.DefaultClient.Get("http://example.com")
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
