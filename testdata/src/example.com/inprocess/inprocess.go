// Package inprocess builds a request and serves it with a handler in the
// same process: no request leaves the process.
package inprocess

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// Status returns the status that h answers a GET of path with.
func Status(ctx context.Context, h http.Handler, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, nil
}
