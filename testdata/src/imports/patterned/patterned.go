// want package:"reaches github.com/openai/openai-go/v3 via imports/patterned"
// Package patterned has no directive; the lease.packages setting selects it.
package patterned

import "github.com/openai/openai-go/v3" // want `lease package imports model SDK`

var _ = openai.Complete
