// Package webhook posts events to a chat channel.
package webhook

import (
	"context"
	"net/http"
	"strings"
)

// Post sends msg to url.
func Post(ctx context.Context, url, msg string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
