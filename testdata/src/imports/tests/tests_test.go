package tests

import (
	"net/http/httptest" // ok: test files are not the lease path
	"testing"

	"github.com/stretchr/testify/assert" // ok: test files are not the lease path
)

func TestAdd(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	if resp, err := srv.Client().Get(srv.URL); err == nil {
		resp.Body.Close()
	}
	assert.Equal(t, 3, Add(1, 2))
}
