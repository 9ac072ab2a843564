package leasepkg_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/leasepkg"
)

// recorder is a Metrics and a slog.Handler that records what it is told.
type recorder struct {
	mu      sync.Mutex
	calls   []string                // Metrics: "acquired orders@1", ...
	records []map[string]slog.Value // log records' attributes, by key
	msgs    []string                // log records: "INFO lease acquired"
	took    []time.Duration         // renewals' latencies
}

func (r *recorder) add(call string, l leasepkg.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s %s@%d", call, l.Name, l.Epoch))
}

func (r *recorder) Acquired(l leasepkg.Lease) { r.add("acquired", l) }
func (r *recorder) Renewed(l leasepkg.Lease, took time.Duration) {
	r.add("renewed", l)
	r.mu.Lock()
	r.took = append(r.took, took)
	r.mu.Unlock()
}
func (r *recorder) RenewFailed(l leasepkg.Lease, _ error) { r.add("renew-failed", l) }
func (r *recorder) Lost(l leasepkg.Lease)                 { r.add("lost", l) }
func (r *recorder) Released(l leasepkg.Lease)             { r.add("released", l) }
func (r *recorder) WriteRefused(l leasepkg.Lease)         { r.add("write-refused", l) }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]slog.Value{}
	rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	r.records = append(r.records, attrs)
	return nil
}

// has says whether a call was recorded.
func (r *recorder) has(call string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.calls, call)
}

// record returns the attributes of the first log record with msg.
func (r *recorder) record(msg string) map[string]slog.Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.msgs, msg); i >= 0 {
		return r.records[i]
	}
	return nil
}

// TestMetricsAndLogger: the Metrics and the Logger of a Manager, and of a
// Client, are told of an acquisition, a renewal with its latency, and the
// loss when another holder takes the lease, with the lease's name, holder,
// epoch and the error.
func TestMetricsAndLogger(t *testing.T) {
	t.Parallel()
	for _, client := range []bool{false, true} {
		name := "a Manager"
		if client {
			name = "a Client"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			rec := &recorder{}
			edit := func(c *leasepkg.Config) {
				short(c)
				c.Metrics = rec
				c.Logger = slog.New(rec)
			}
			var m *leasepkg.Manager
			if client {
				var err error
				if m, err = newClient(t, d.pool, "a", edit).Manager(leaseName); err != nil {
					t.Fatal(err)
				}
			} else {
				m = d.manager("a", edit)
			}
			err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
				for !rec.has("renewed orders@1") {
					select {
					case <-ctx.Done():
						return context.Cause(ctx)
					case <-time.After(10 * time.Millisecond):
					}
				}
				d.exec(`UPDATE worker_leases SET holder = 'thief', epoch = epoch + 1`)
				<-ctx.Done()
				return ctx.Err()
			})
			if !errors.Is(err, leasepkg.ErrLeaseLost) {
				t.Fatalf("Hold: %v, want ErrLeaseLost", err)
			}
			for _, want := range []string{"acquired orders@1", "renewed orders@1", "lost orders@1"} {
				if !rec.has(want) {
					t.Errorf("Metrics not told %q; told %v", want, rec.calls)
				}
			}
			if len(rec.took) == 0 || rec.took[0] <= 0 {
				t.Errorf("renewal latencies %v, want positive", rec.took)
			}
			acquired := rec.record("INFO lease acquired")
			if acquired == nil || acquired["lease"].String() != leaseName || acquired["holder"].String() != "a" || acquired["epoch"].Int64() != 1 {
				t.Errorf("log of the acquisition: %v, want lease, holder and epoch; logged %v", acquired, rec.msgs)
			}
			lost := rec.record("ERROR lease lost")
			if lostErr, _ := lost["error"].Any().(error); lost == nil || lost["epoch"].Int64() != 1 || !errors.Is(lostErr, leasepkg.ErrLeaseLost) {
				t.Errorf("log of the loss: %v, want its epoch and ErrLeaseLost; logged %v", lost, rec.msgs)
			}
			if rec.record("DEBUG lease renewed") == nil {
				t.Errorf("no renewal logged; logged %v", rec.msgs)
			}
		})
	}
}
