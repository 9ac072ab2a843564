// Package leaseprom exports what happens to leasepkg's leases as
// Prometheus metrics: a [leasepkg.Metrics] that counts acquisitions,
// losses, releases, failed renewals and refused fenced writes, times
// renewals, and shows each lease's epoch.
//
// It lives apart from leasepkg so that the lease package imports no
// metrics library: Prometheus' client reaches net/http (for its handler's
// types), and a lease package must not import an HTTP client, directly or
// through its dependencies. leasepkg knows only its own small Metrics
// interface; this package implements it, and a program that wants
// Prometheus imports both:
//
//	reg := prometheus.NewRegistry()
//	metrics, err := leaseprom.New(reg, leaseprom.Options{})
//	if err != nil {
//		return err
//	}
//	cfg := leasepkg.DefaultConfig("orders")
//	cfg.Metrics = metrics
//
// Every metric has a label "lease", the lease's name, unless
// Options.NoLeaseLabel: a Client of 10,000 leases would make 10,000
// series of each metric, and the histogram's buckets each.
package leaseprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// Options configures [New].
type Options struct {
	// Namespace prefixes every metric's name. Default "leasepkg"
	// (leasepkg_acquisitions_total, ...).
	Namespace string

	// Buckets are the renewal latency histogram's, in seconds. Default
	// prometheus.DefBuckets (5 ms to 10 s).
	Buckets []float64

	// NoLeaseLabel leaves out the label "lease": every lease counts in
	// one series of each metric, and there is no epoch gauge. For a
	// process with many leases.
	NoLeaseLabel bool
}

// Metrics is a [leasepkg.Metrics] that updates Prometheus collectors;
// make it with [New]. It is safe for concurrent use, and its methods
// never block.
type Metrics struct {
	acquisitions  *prometheus.CounterVec
	losses        *prometheus.CounterVec
	releases      *prometheus.CounterVec
	renewFailures *prometheus.CounterVec
	refused       *prometheus.CounterVec
	renewals      *prometheus.HistogramVec
	epoch         *prometheus.GaugeVec // nil with NoLeaseLabel
	byLease       bool
}

var _ leasepkg.Metrics = (*Metrics)(nil)

// New makes the collectors and registers them with reg
// (prometheus.DefaultRegisterer if nil):
//
//	leasepkg_acquisitions_total{lease}           counter
//	leasepkg_losses_total{lease}                 counter
//	leasepkg_releases_total{lease}               counter
//	leasepkg_renewal_failures_total{lease}       counter
//	leasepkg_fenced_writes_refused_total{lease}  counter
//	leasepkg_renewal_duration_seconds{lease}     histogram
//	leasepkg_epoch{lease}                        gauge: the epoch last acquired or renewed to
//
// It fails if one of them cannot be registered (a collector of that name
// is registered already), and then registers none.
func New(reg prometheus.Registerer, opts Options) (*Metrics, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "leasepkg"
	}
	buckets := opts.Buckets
	if buckets == nil {
		buckets = prometheus.DefBuckets
	}
	var labels []string
	if !opts.NoLeaseLabel {
		labels = []string{"lease"}
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	m := &Metrics{
		acquisitions:  counter("acquisitions_total", "Leases acquired: terms started, each at a new epoch."),
		losses:        counter("losses_total", "Leases lost: a renewal found them expired or taken, or none was confirmed in time."),
		releases:      counter("releases_total", "Leases given up by their holder."),
		renewFailures: counter("renewal_failures_total", "Renewals that failed without proof that the lease is lost."),
		refused:       counter("fenced_writes_refused_total", "Fenced writes refused: stale fence, nothing written."),
		renewals: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "renewal_duration_seconds",
			Help:    "Time from sending a renewal to its confirmation (for a Client, the one statement that renews all of its leases).",
			Buckets: buckets,
		}, labels),
		byLease: !opts.NoLeaseLabel,
	}
	cs := []prometheus.Collector{m.acquisitions, m.losses, m.releases, m.renewFailures, m.refused, m.renewals}
	if m.byLease {
		m.epoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "epoch", Help: "The lease's epoch, its fencing token, as this process last acquired or renewed it."}, labels)
		cs = append(cs, m.epoch)
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	return m, nil
}

// values are the label values for l.
func (m *Metrics) values(l leasepkg.Lease) []string {
	if m.byLease {
		return []string{l.Name}
	}
	return nil
}

// Acquired counts an acquisition and sets the lease's epoch.
func (m *Metrics) Acquired(l leasepkg.Lease) {
	m.acquisitions.WithLabelValues(m.values(l)...).Inc()
	m.setEpoch(l)
}

// Renewed times a renewal and sets the lease's epoch.
func (m *Metrics) Renewed(l leasepkg.Lease, took time.Duration) {
	m.renewals.WithLabelValues(m.values(l)...).Observe(took.Seconds())
	m.setEpoch(l)
}

// RenewFailed counts a failed renewal.
func (m *Metrics) RenewFailed(l leasepkg.Lease, _ error) {
	m.renewFailures.WithLabelValues(m.values(l)...).Inc()
}

// Lost counts a loss.
func (m *Metrics) Lost(l leasepkg.Lease) { m.losses.WithLabelValues(m.values(l)...).Inc() }

// Released counts a release.
func (m *Metrics) Released(l leasepkg.Lease) { m.releases.WithLabelValues(m.values(l)...).Inc() }

// WriteRefused counts a refused fenced write.
func (m *Metrics) WriteRefused(l leasepkg.Lease) { m.refused.WithLabelValues(m.values(l)...).Inc() }

func (m *Metrics) setEpoch(l leasepkg.Lease) {
	if m.epoch != nil {
		m.epoch.WithLabelValues(l.Name).Set(float64(l.Epoch))
	}
}
