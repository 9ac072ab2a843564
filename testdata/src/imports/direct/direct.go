// want package:"reaches github.com/openai/openai-go/v3 via imports/direct; github.com/sashabaranov/go-openai via imports/direct; net/http via imports/direct"
//leaseguard:lease

// Package direct imports banned packages directly, in every import form.
package direct

import (
	"fmt" // ok: not banned

	ai "github.com/openai/openai-go/v3"   // want `lease package imports model SDK github.com/openai/openai-go/v3: a vendor in the write path can veto leadership`
	_ "github.com/sashabaranov/go-openai" // want `lease package imports model SDK github.com/sashabaranov/go-openai: a vendor`
	"net/http"                            // want `lease package imports HTTP client net/http: a network call in the write path can veto leadership`
	. "net/http/httptrace"                // want `lease package imports HTTP client net/http/httptrace: a network call`
)

var (
	_ = fmt.Sprint
	_ = http.StatusOK
	_ = ai.Complete
	_ = WithClientTrace
)
