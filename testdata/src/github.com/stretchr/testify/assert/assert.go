// Package assert stands in for testify's assert: its HTTP helpers build a
// request and serve it with an in-process handler, through httptest.
package assert

import (
	"net/http"
	"net/http/httptest"
)

// TestingT stands in for assert.TestingT.
type TestingT interface {
	Errorf(format string, args ...any)
}

// HTTPSuccess stands in for assert.HTTPSuccess.
func HTTPSuccess(t TestingT, handler http.HandlerFunc, method, url string) bool {
	req, err := http.NewRequest(method, url, http.NoBody)
	if err != nil {
		t.Errorf("%v", err)
		return false
	}
	w := httptest.NewRecorder()
	handler(w, req)
	return w.Code >= http.StatusOK && w.Code < http.StatusMultipleChoices
}

// Equal stands in for assert.Equal.
func Equal(t TestingT, want, got any) bool {
	if want != got {
		t.Errorf("got %v, want %v", got, want)
		return false
	}
	return true
}
