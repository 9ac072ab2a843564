//go:build e2e

package faults_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
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
	// writers is how many writers each worker runs at once (1 if zero).
	writers int
	// paths are the workers' ways of leading and writing, given in turn.
	paths []path
	// phased injects the faults one kind at a time, each for its share of
	// the duration and at least atLeast times, rather than mixed.
	phased  bool
	atLeast int
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
		// Every path under every fault, one kind of fault at a time, so
		// that what each fault did to each path can be told apart.
		{name: "per-term epochs", policy: "term", paths: paths, workers: 8, duration: main, faults: all, writers: 3, phased: true, atLeast: 2},
		{name: "per-renewal epochs", policy: "renewal", paths: managerPaths, workers: 6, duration: main * 4 / 9, faults: all, writers: 3},
		// Schema drift: the epoch index dropped, the checker must still
		// find nothing, since the takeover locks the row FOR UPDATE itself.
		// The frozen transactions outlive the lease (no idle timeout).
		{name: "schema drift (no epoch index)", policy: "term", paths: paths, workers: 4, duration: 20 * time.Second,
			faults: []string{freeze, pause, kill}, drift: true, weaken: "idle", writers: 2},
	} {
		r := runFaults(t, srv, bins, spec)
		reports = append(reports, r)
		if r.violations.Any() || r.observers.Any() || len(r.twice) > 0 || r.finalLeader != "" {
			t.Errorf("%s: %v; %v; epochs acquired by two workers %v; final leader: %s", spec.name, r.violations, r.observers, r.twice, r.finalLeader)
		}
		if r.tally.Committed == 0 {
			t.Errorf("%s: no write committed: the run tested nothing", spec.name)
		}
		if !spec.phased {
			continue
		}
		for _, p := range spec.paths {
			if r.committedBy(p.String()) == 0 {
				t.Errorf("%s: no write committed through %v: the run tested nothing there", spec.name, p)
			}
		}
		for _, k := range spec.faults {
			if r.injected[k] < spec.atLeast {
				t.Errorf("%s: %s injected %d times, want %d", spec.name, k, r.injected[k], spec.atLeast)
			}
		}
	}

	// The negative controls: two workers of one way of writing each, with
	// the fence's row lock removed, frozen mid-transaction. The checker
	// must catch the stale writes that land through every way; if it does
	// not, it proves nothing above.
	for _, p := range []path{{"hold", "fence"}, {"campaign", "tx"}, {"campaign", "txsql"}, {"campaign", "fencesql"}, {"client", "tx"}} {
		ctl := runFaults(t, srv, bins, runSpec{name: "negative control (no row lock), " + p.String(), policy: "term", paths: []path{p}, workers: 2,
			duration: 8 * time.Second, faults: []string{freeze}, weaken: "lock,idle"})
		if len(ctl.violations.StaleOrders) == 0 {
			t.Errorf("negative control %v: the checker found no stale order with the fence's row lock removed (%d freezes)", p, ctl.injected[freeze])
		}
		reports = append(reports, ctl)
	}

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
	observers  faults.ObserverViolations
	twice      []int64 // epochs that two workers said they acquired
	// finalLeader is what disagreed with the lease row once no one
	// contended: "" when every observer reported the final leader; asked
	// says whether the run asked.
	finalLeader string
	asked       bool
	cells       map[[2]string]*cell // by path and phase
	elapsed     time.Duration       // from the workers' start to the end of the check
}

// cell is what one path did while one kind of fault was injected.
type cell struct {
	committed, stale, lost, epochs int
}

func (r *report) cell(path, phase string) *cell {
	if r.cells == nil {
		r.cells = map[[2]string]*cell{}
	}
	k := [2]string{path, phase}
	if r.cells[k] == nil {
		r.cells[k] = &cell{}
	}
	return r.cells[k]
}

// breakdown counts the committed, stale and lost writes by path and by
// the fault being injected when the worker reported them.
func (r *report) breakdown(outcomes []faults.Outcome, pathOf func(key string) string) {
	byKey := make(map[string]faults.Outcome, len(outcomes))
	for _, o := range outcomes {
		byKey[o.Key] = o
		if o.Kind == faults.Acked {
			r.cell(o.Path, o.Phase).committed++
		}
	}
	at := func(key string) *cell {
		if o, ok := byKey[key]; ok {
			return r.cell(o.Path, o.Phase)
		}
		return r.cell(pathOf(key), "?") // written, never reported: the worker died first
	}
	for _, k := range r.violations.StaleOrders {
		at(k).stale++
	}
	for _, k := range r.violations.Lost {
		at(k).lost++
	}
}

func (r *report) final() string {
	switch {
	case !r.asked:
		return "not asked"
	case r.finalLeader == "":
		return "every observer reported it"
	}
	return r.finalLeader
}

// committedBy returns the writes acknowledged through path.
func (r *report) committedBy(path string) int {
	n := 0
	for k, c := range r.cells {
		if k[0] == path {
			n += c.committed
		}
	}
	return n
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== %s: %d workers, TTL %v, renew every %v, %v (%v in all)\n", r.spec.name, r.spec.workers, r.ttl, r.renew, r.spec.duration, r.elapsed.Round(time.Second))
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
	fmt.Fprintf(&b, "   violations: %v\n", r.violations)
	fmt.Fprintf(&b, "   observers: %v; epochs acquired by two workers %v; final leader: %s\n", r.observers, r.twice, r.final())
	fmt.Fprintf(&b, "   %-22s %-50s %9s %5s %4s %6s\n", "path", "fault", "committed", "stale", "lost", "epochs")
	for _, k := range slices.SortedFunc(maps.Keys(r.cells), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) {
		c := r.cells[k]
		fmt.Fprintf(&b, "   %-22s %-50s %9d %5d %4d %6d\n", k[0], k[1], c.committed, c.stale, c.lost, c.epochs)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
