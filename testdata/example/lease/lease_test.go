package lease

import (
	"net/http/httptest"
	"testing"
)

// A test helper that serves HTTP is still an import of the lease package.
func TestOnLost(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	_ = OnLost(t.Context(), srv.URL, ErrLost)
}
