// want package:"reaches github.com/openai/openai-go/v3 via imports/tests_test -> example.com/explain; net/http/httptest via imports/tests_test -> imports/tests"
package tests_test

import (
	"testing"

	"example.com/explain" // want `lease package imports model SDK github.com/openai/openai-go/v3 via example.com/explain`
	"imports/tests"
)

func TestExternal(t *testing.T) {
	_ = explain.Why
	if tests.Add(2, 2) != 4 {
		t.Fatal("bad sum")
	}
}
