// want package:"reaches github.com/openai/openai-go/v3 via imports/testson_test -> example.com/explain; net/http/httptest via imports/testson_test -> imports/testson; net/http via imports/testson_test -> imports/testson \\(uses http.Client.Get\\)"
package testson_test

import (
	"testing"

	"example.com/explain" // want `lease package imports model SDK github.com/openai/openai-go/v3 via example.com/explain`
	"imports/testson"
)

func TestExternal(t *testing.T) {
	_ = explain.Why
	if testson.Add(2, 2) != 4 {
		t.Fatal("bad sum")
	}
}
