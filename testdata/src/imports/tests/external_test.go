// want package:"reaches github.com/openai/openai-go/v3 via imports/tests_test -> example.com/explain; net/http/httptest via imports/tests_test -> imports/tests; net/http via imports/tests_test -> imports/tests \\(uses http.Client.Get\\)"
package tests_test

import (
	"testing"

	"example.com/explain" // ok: the external test package is not the lease path
	"imports/tests"
)

func TestExternal(t *testing.T) {
	_ = explain.Why
	if tests.Add(2, 2) != 4 {
		t.Fatal("bad sum")
	}
}
