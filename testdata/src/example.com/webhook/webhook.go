// Package webhook posts events with an HTTP client.
package webhook

import (
	"net/http"
	"strings"
)

// Post sends body to url.
func Post(c *http.Client, url, body string) error {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
