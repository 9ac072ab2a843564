// Package explain asks a model why a write failed.
package explain

import (
	"context"

	"github.com/openai/openai-go/v3"
)

// Failure returns the model's account of err.
func Failure(ctx context.Context, err error) string {
	text, _ := openai.NewClient().Complete(ctx, "why did this fail: "+err.Error())
	return text
}
