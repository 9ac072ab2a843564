package leasepkg

import (
	"context"
	"log/slog"
	"time"
)

// logEvent logs e to logger, if any: acquisitions and releases at Info,
// renewals at Debug, failed renewals, refused writes and the rest at Warn,
// losses at Error; with the lease's name, holder, epoch and term, and the
// error. took is a renewal's latency.
func logEvent(logger *slog.Logger, e Event, took time.Duration) {
	if logger == nil {
		return
	}
	level, msg := slog.LevelWarn, ""
	switch e.Kind {
	case Acquired:
		level, msg = slog.LevelInfo, "lease acquired"
	case Renewed:
		level, msg = slog.LevelDebug, "lease renewed"
	case RenewFailed:
		msg = "lease renewal failed"
	case Lost:
		level, msg = slog.LevelError, "lease lost"
	case Released:
		level, msg = slog.LevelInfo, "lease released"
	case WriteRejected:
		msg = "fenced write refused"
	case TerminateFailed:
		msg = "takeover could not end the old holder's idle transactions"
	case ObserveFailed:
		msg = "observing the lease failed"
	default:
		msg = e.Kind.String()
	}
	ctx := context.Background()
	if !logger.Enabled(ctx, level) {
		return
	}
	attrs := leaseAttrs(e.Lease)
	if e.Kind == Renewed {
		attrs = append(attrs, slog.Duration("took", took))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.Any("error", e.Err))
	}
	if e.Dropped > 0 {
		attrs = append(attrs, slog.Int("dropped", e.Dropped))
	}
	logger.LogAttrs(ctx, level, msg, attrs...)
}

// leaseAttrs are a lease's attributes in a log record; those of a lease
// that names only its name (an observer's) are its name alone.
func leaseAttrs(l Lease) []slog.Attr {
	attrs := []slog.Attr{slog.String("lease", l.Name)}
	if l.Holder != "" {
		attrs = append(attrs, slog.String("holder", l.Holder))
	}
	if l.Epoch != 0 {
		attrs = append(attrs, slog.Int64("epoch", l.Epoch))
	}
	if l.Term != "" {
		attrs = append(attrs, slog.String("term", l.Term))
	}
	return attrs
}

// logCampaign logs a campaign's retry after err (attempt is the number of
// consecutive attempts that failed for want of a database, 0 when the
// lease was held), or its giving up, to the Manager's Logger, if any.
func (m *Manager) logCampaign(err error, attempt int, givesUp string) {
	logger := m.cfg.Logger
	if logger == nil {
		return
	}
	attrs := leaseAttrs(Lease{Name: m.cfg.Name, Holder: m.cfg.Holder})
	attrs = append(attrs, slog.Any("error", err))
	ctx := context.Background()
	switch {
	case givesUp != "":
		logger.LogAttrs(ctx, slog.LevelError, "campaign gives up: "+givesUp, attrs...)
	case attempt == 0:
		logger.LogAttrs(ctx, slog.LevelDebug, "campaign waits for the lease", attrs...)
	default:
		logger.LogAttrs(ctx, slog.LevelWarn, "campaign retries", append(attrs, slog.Int("attempt", attempt))...)
	}
}
