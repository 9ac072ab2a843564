package leasepkg

import "time"

// Metrics is told what happens to a Manager's leases, for an application's
// counters and histograms, as [Observer] is for its own logic; it needs
// no metrics library here. leasepkg/leaseprom adapts it to Prometheus.
// Config.Metrics nil means no metrics.
//
// Unlike an Observer's, its methods are called on the goroutine where the
// thing happened (the renewal loop, the call that acquired or wrote), so
// that none is dropped: they must return at once and never block.
// Prometheus' counters and histograms, atomic adds, do. A Client's
// Managers share the Client's. Embed [NopMetrics] to implement only some
// methods.
type Metrics interface {
	// Acquired: l was acquired, at l.Epoch.
	Acquired(l Lease)
	// Renewed: a renewal of l was confirmed, took after it was sent (for
	// a Client's, the one statement that renewed all of its terms).
	Renewed(l Lease, took time.Duration)
	// RenewFailed: a renewal of l failed without proof that it is lost.
	RenewFailed(l Lease, err error)
	// Lost: l is lost (a renewal found it expired or taken, or none was
	// confirmed in time).
	Lost(l Lease)
	// Released: the holder gave l up.
	Released(l Lease)
	// WriteRefused: a fenced write under l was refused (ErrStaleFence).
	WriteRefused(l Lease)
}

// NopMetrics is a [Metrics] that does nothing, to embed in one that
// implements only some of the methods.
type NopMetrics struct{}

// Acquired does nothing.
func (NopMetrics) Acquired(Lease) {}

// Renewed does nothing.
func (NopMetrics) Renewed(Lease, time.Duration) {}

// RenewFailed does nothing.
func (NopMetrics) RenewFailed(Lease, error) {}

// Lost does nothing.
func (NopMetrics) Lost(Lease) {}

// Released does nothing.
func (NopMetrics) Released(Lease) {}

// WriteRefused does nothing.
func (NopMetrics) WriteRefused(Lease) {}

// count tells metrics, if any, of an event; took is a renewal's latency.
func count(metrics Metrics, e Event, took time.Duration) {
	if metrics == nil {
		return
	}
	switch e.Kind {
	case Acquired:
		metrics.Acquired(e.Lease)
	case Renewed:
		metrics.Renewed(e.Lease, took)
	case RenewFailed:
		metrics.RenewFailed(e.Lease, e.Err)
	case Lost:
		metrics.Lost(e.Lease)
	case Released:
		metrics.Released(e.Lease)
	case WriteRejected:
		metrics.WriteRefused(e.Lease)
	}
}
