// Package explain explains failed writes with a model.
package explain

import "github.com/openai/openai-go/v3"

// Why asks the model.
func Why(err error) string { return openai.Complete(err.Error()) }
