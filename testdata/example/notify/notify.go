// Package notify tells the on-call channel about lease changes.
package notify

import (
	"context"

	"example.com/shop/webhook"
)

// LeaderChanged announces a new leader.
func LeaderChanged(ctx context.Context, holder string) error {
	return webhook.Post(ctx, "https://chat.invalid/hooks/oncall", holder+" leads now")
}
