//leaseguard:lease

// Package lease is a leader lease that has grown a model and a webhook.
package lease

import (
	"context"
	"errors"

	"example.com/shop/explain"
	"example.com/shop/metrics"
	"example.com/shop/notify"
)

// ErrLost means the lease is lost.
var ErrLost = errors.New("lost lease; refuse all writes")

// OnLost explains the loss and tells the channel: both calls now sit
// between the holder and its next renewal.
func OnLost(ctx context.Context, holder string, err error) error {
	metrics.Renewals.Store(0)
	_ = explain.Failure(ctx, err)
	return notify.LeaderChanged(ctx, holder)
}
