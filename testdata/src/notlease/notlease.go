// want package:"reaches github.com/openai/openai-go/v3 via notlease; net/http via notlease; net/http via notlease \\(uses http.Get\\)"
// Package notlease imports everything the rule bans, but carries no
// directive: nothing is reported.
package notlease

import (
	"net/http"

	"example.com/explain"
	"github.com/openai/openai-go/v3"
)

var (
	_ = http.Get
	_ = explain.Why
	_ = openai.Complete
)
