package tests

import (
	"net/http/httptest" // want `lease package imports HTTP client net/http/httptest`
	"testing"
)

func TestAdd(t *testing.T) {
	_ = httptest.NewRecorder()
	if Add(1, 2) != 3 {
		t.Fatal("bad sum")
	}
}
