// want package:"reaches github.com/openai/openai-go/v3 via imports/direct; github.com/sashabaranov/go-openai via imports/direct; net/http via imports/direct; net/http via imports/direct \\(uses http.Client.Get\\)"
//leaseguard:lease

// Package direct imports banned packages directly, in every import form.
package direct

import (
	"fmt" // ok: not banned

	ai "github.com/openai/openai-go/v3"   // want `lease package imports model SDK github.com/openai/openai-go/v3: a vendor in the write path can veto leadership`
	_ "github.com/sashabaranov/go-openai" // want `lease package imports model SDK github.com/sashabaranov/go-openai: a vendor`
	"net/http"                            // want `lease package imports HTTP client net/http and uses http.Client.Get: a network call in the write path can veto leadership`
	. "net/http/httptrace"                // ok: the use is reported at the net/http import
)

var (
	_    = fmt.Sprint
	_, _ = http.DefaultClient.Get("https://example.invalid/")
	_    = ai.Complete
	_    = WithClientTrace
)
