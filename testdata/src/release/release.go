// want package:"reaches github.com/openai/openai-go/v3 via release"
// Package release is named like a lease package but is not one.
package release

import "github.com/openai/openai-go/v3"

var _ = openai.Complete
