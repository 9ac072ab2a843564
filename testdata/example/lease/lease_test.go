package lease

import (
	"net/http/httptest"
	"testing"
)

// A test that calls a test server with its client: not the lease path, so
// reported only with -imports.tests.
func TestOnLost(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	if resp, err := srv.Client().Get(srv.URL); err == nil {
		resp.Body.Close()
	}
	_ = OnLost(t.Context(), srv.URL, ErrLost)
}
