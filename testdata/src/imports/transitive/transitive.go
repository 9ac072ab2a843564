// want package:"reaches github.com/openai/openai-go/v3 via imports/transitive -> example.com/explain; net/http via imports/transitive -> example.com/metrics; net/http via imports/transitive -> example.com/notify -> example.com/webhook \\(uses http.Client.Do\\)"
//leaseguard:lease

// Package transitive reaches banned packages through other packages.
package transitive

import (
	"example.com/explain" // want `lease package imports model SDK github.com/openai/openai-go/v3 via example.com/explain: a vendor in the write path can veto leadership`
	"example.com/metrics" // ok: net/http for a handler only
	"example.com/notify"  // want `lease package imports HTTP client net/http via example.com/notify -> example.com/webhook \(example.com/webhook uses http.Client.Do\): a network call in the write path can veto leadership`
	"example.com/outer"   // want `lease package imports model SDK github.com/openai/openai-go/v3 via example.com/outer -> example.com/explain: a vendor`
)

var (
	_ = explain.Why
	_ = metrics.Handler
	_ = notify.Tell
	_ = outer.Report
)
