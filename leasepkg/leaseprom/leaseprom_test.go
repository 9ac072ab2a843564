package leaseprom_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
	"github.com/leaseguard/leaseguard/leasepkg/leaseprom"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestMetrics: New registers its collectors (a second New on the same
// registry fails), an acquisition, a renewal, a refused fenced write and
// a loss of a lease on a real PostgreSQL move them, and they pass
// Prometheus' lint.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	metrics, err := leaseprom.New(reg, leaseprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaseprom.New(reg, leaseprom.Options{}); err == nil {
		t.Fatal("New registered the same collectors twice")
	}
	if got := gathered(t, reg, "leasepkg_acquisitions_total"); got != 0 {
		t.Fatalf("acquisitions before any lease: %v, want 0", got)
	}

	pool := pgtest.Pool(t)
	cfg := leasepkg.DefaultConfig("orders")
	cfg.Holder = "a"
	cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = 600*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	cfg.Metrics = metrics
	m, err := leasepkg.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	err = m.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
		if got := gathered(t, reg, "leasepkg_acquisitions_total"); got != 1 {
			t.Errorf("acquisitions after Hold acquired: %v, want 1", got)
		}
		if got := gathered(t, reg, "leasepkg_epoch"); got != 1 {
			t.Errorf("epoch after Hold acquired: %v, want 1", got)
		}
		for gathered(t, reg, "leasepkg_renewal_duration_seconds") == 0 {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(10 * time.Millisecond):
			}
		}
		stale := term.Lease()
		stale.Epoch++
		if err := m.Tx(ctx, stale, func(context.Context, pgx.Tx) error { return nil }); !errors.Is(err, leasepkg.ErrStaleFence) {
			t.Errorf("write under a wrong epoch: %v, want ErrStaleFence", err)
		}
		if _, err := pool.Exec(ctx, `UPDATE worker_leases SET holder = 'thief', epoch = epoch + 1`); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, leasepkg.ErrLeaseLost) {
		t.Fatalf("Hold: %v, want ErrLeaseLost", err)
	}
	for name, want := range map[string]float64{
		"leasepkg_acquisitions_total":          1,
		"leasepkg_losses_total":                1,
		"leasepkg_fenced_writes_refused_total": 1,
		"leasepkg_releases_total":              0,
	} {
		if got := gathered(t, reg, name); got != want {
			t.Errorf("%s{lease=\"orders\"} = %v, want %v", name, got, want)
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s: %s", p.Metric, p.Text)
	}
}

// gathered returns what reg gathers of the metric called name for the
// lease "orders": a counter's or a gauge's value, a histogram's count of
// observations; 0 if there is none.
func gathered(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "lease" || m.GetLabel()[0].GetValue() != "orders" {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// TestNoLeaseLabel: with NoLeaseLabel every lease counts in one series of
// each metric, without the label, and there is no epoch gauge.
func TestNoLeaseLabel(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	metrics, err := leaseprom.New(reg, leaseprom.Options{Namespace: "shards", NoLeaseLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		metrics.Acquired(leasepkg.Lease{Name: name, Epoch: 1})
		metrics.Renewed(leasepkg.Lease{Name: name, Epoch: 1}, time.Millisecond)
	}
	if n := testutil.CollectAndCount(reg, "shards_acquisitions_total"); n != 1 {
		t.Errorf("%d series of acquisitions, want 1", n)
	}
	if n := testutil.CollectAndCount(reg, "shards_epoch"); n != 0 {
		t.Errorf("%d series of the epoch gauge, want none", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "shards_acquisitions_total" {
			if got := mf.GetMetric()[0].GetCounter().GetValue(); got != 3 {
				t.Errorf("acquisitions %v, want 3", got)
			}
			if labels := mf.GetMetric()[0].GetLabel(); len(labels) != 0 {
				t.Errorf("labels %v, want none", labels)
			}
		}
	}
}
