//go:build e2e

package faults_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// EnvLong names the environment variable that turns on the long mode: its
// value is how long each of the two main runs lasts (LEASEGUARD_FAULTS_LONG=10m).
const EnvLong = "LEASEGUARD_FAULTS_LONG"

const leaseName = "orders"

// kinds of fault.
const (
	kill      = "kill -9 of the holder"
	pause     = "SIGSTOP of the holder past its TTL"
	freeze    = "holder frozen holding the fence's row lock"
	restart   = "PostgreSQL restart"
	stall     = "holder's connections stalled"
	delay     = "holder's traffic delayed"
	cut       = "holder's connections cut mid-result"
	partition = "holder partitioned from the database"
	// partitionTx cuts the holder off while its fenced transaction is
	// open: the server keeps the row lock until the fence's idle timeout
	// ends the session.
	partitionTx = "holder partitioned with its fenced transaction open"
)

// runSpec is one run: contenders, policy, faults, and for how long.
type runSpec struct {
	name     string
	policy   string // term or renewal
	workers  int
	duration time.Duration
	faults   []string
	weaken   string // the negative control: part of the fence to remove
	// drift, the schema-drift control, drops UNIQUE (name, epoch) after
	// the migration: the takeover's own FOR UPDATE must still hold.
	drift bool
	// writers is how many writers each worker that holds transactions
	// open runs at once (1 if zero).
	writers int
}

func TestFaults(t *testing.T) {
	main, long := 45*time.Second, false
	if v := os.Getenv(EnvLong); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", EnvLong, v, err)
		}
		main, long = d, true
	}
	all := []string{kill, pause, freeze, restart, stall, delay, cut, partition, partitionTx}
	bins := buildWorkers(t)
	srv := startCluster(t)

	var reports []*report
	for _, spec := range []runSpec{
		{name: "per-term epochs", policy: "term", workers: 8, duration: main, faults: all, writers: 3},
		{name: "per-renewal epochs", policy: "renewal", workers: 8, duration: main * 2 / 3, faults: all, writers: 3},
		// Schema drift: the epoch index dropped, the checker must still
		// find nothing, since the takeover locks the row FOR UPDATE itself.
		// The frozen transactions outlive the lease (no idle timeout).
		{name: "schema drift (no epoch index)", policy: "term", workers: 4, duration: 20 * time.Second,
			faults: []string{freeze, pause, kill}, drift: true, weaken: "idle", writers: 2},
	} {
		r := runFaults(t, srv, bins, spec)
		reports = append(reports, r)
		if r.violations.Any() {
			t.Errorf("%s: %v", spec.name, r.violations)
		}
		if r.tally.Committed == 0 {
			t.Errorf("%s: no write committed: the run tested nothing", spec.name)
		}
	}

	// The negative control: the same workers with the fence's row lock
	// removed, frozen mid-transaction. The checker must catch the stale
	// writes that land; if it does not, it proves nothing above.
	ctl := runFaults(t, srv, bins, runSpec{name: "negative control (no row lock)", policy: "term", workers: 4,
		duration: 20 * time.Second, faults: []string{freeze}, weaken: "lock,idle"})
	if len(ctl.violations.StaleOrders) == 0 {
		t.Errorf("negative control: the checker found no stale order with the fence's row lock removed (%d freezes)", ctl.injected[freeze])
	}
	reports = append(reports, ctl)

	for _, r := range reports {
		t.Log(r)
	}
	if long {
		t.Logf("long mode: %v per main run", main)
	}
}

// buildWorkers builds the worker program, plain and with the fence
// weakening compiled in.
func buildWorkers(t *testing.T) map[string]string {
	t.Helper()
	if err := testdir.Track(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bins := map[string]string{"": filepath.Join(dir, "worker"), "weak": filepath.Join(dir, "worker-weak")}
	for tags, bin := range map[string]string{"": bins[""], "leaseguard_weaken": bins["weak"]} {
		cmd := exec.Command("go", "build", "-tags="+tags, "-o", bin, "./worker")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build worker (tags %q): %v\n%s", tags, err, out)
		}
	}
	return bins
}

// startCluster starts a PostgreSQL cluster of the suite's own, which it
// may restart, of the version that LEASE_PG_VERSION selects, and logs it.
func startCluster(t *testing.T, settings ...string) *pgcluster.Server {
	t.Helper()
	srv, err := pgcluster.Start(pgcluster.Options{Settings: settings})
	if err != nil {
		testdir.Unavailable(t, "no PostgreSQL cluster for the fault suite: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	v, err := srv.CheckVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s at %s", v, srv.Addr())
	return srv
}

// report is what one run did and found.
type report struct {
	spec       runSpec
	injected   map[string]int
	violations faults.Violations
	tally      faults.Tally
	failovers  map[string][]time.Duration // by kind of fault
	ttl, renew time.Duration
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== %s: %d workers, TTL %v, renew every %v, %v\n", r.spec.name, r.spec.workers, r.ttl, r.renew, r.spec.duration)
	kinds := slices.Sorted(func(yield func(string) bool) {
		for k := range r.injected {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range kinds {
		fmt.Fprintf(&b, "   faults: %-45s %d\n", k, r.injected[k])
	}
	t := r.tally
	fmt.Fprintf(&b, "   orders: attempted %d, committed %d, rejected %d, unknown %d (found %d, absent %d), errors %d\n",
		t.Attempted, t.Committed, t.Rejected, t.UnknownFound+t.UnknownAbsent, t.UnknownFound, t.UnknownAbsent, t.Errors)
	fmt.Fprintf(&b, "   stale writes accepted: %d\n", len(r.violations.StaleOrders))
	if t.Attempted > 0 {
		fmt.Fprintf(&b, "   self-rejections: %d (%.1f per 10,000 writes)\n", t.SelfRejected, float64(t.SelfRejected)*10000/float64(t.Attempted))
	}
	for _, k := range kinds {
		if n := len(r.failovers[k]); n > 0 {
			s := slices.Sorted(slices.Values(r.failovers[k]))
			fmt.Fprintf(&b, "   failover after %-45s median %v, max %v, n=%d\n", k+":",
				s[n/2].Round(time.Millisecond), s[n-1].Round(time.Millisecond), n)
		}
	}
	fmt.Fprintf(&b, "   failover bounds: TTL + renew = %v; with a transaction open, + the idle timeout TTL/2 = %v\n",
		r.ttl+r.renew, r.ttl+r.renew+r.ttl/2)
	fmt.Fprintf(&b, "   violations: %v", r.violations)
	return b.String()
}
