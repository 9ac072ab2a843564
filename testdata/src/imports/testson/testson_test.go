package testson

import (
	"net/http/httptest" // want `lease package imports HTTP client net/http/httptest and uses http.Client.Get: a network call in the write path can veto leadership`
	"testing"

	"github.com/stretchr/testify/assert" // ok: builds requests for in-process handlers, even in a checked test file
)

func TestAdd(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	if resp, err := srv.Client().Get(srv.URL); err == nil {
		resp.Body.Close()
	}
	assert.Equal(t, 3, Add(1, 2))
}
