//go:build e2e

package faults_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/leasepkg"
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
// may restart.
func startCluster(t *testing.T, settings ...string) *pgcluster.Server {
	t.Helper()
	srv, err := pgcluster.Start(pgcluster.Options{Settings: settings})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no PostgreSQL cluster for the fault suite, and CI is set: %v", err)
		}
		t.Skipf("no PostgreSQL cluster for the fault suite: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
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

// worker is one worker process and the proxy it reaches the database by.
type worker struct {
	id    string
	cmd   *exec.Cmd
	proxy *faults.Proxy
	done  chan struct{}
	intx  chan struct{} // a write of this worker is in its open transaction

	mu       sync.Mutex
	outcomes []faults.Outcome
	acquired []int64 // the epochs it said it acquired
	exit     error   // set when the worker ended
}

type run struct {
	t     *testing.T
	spec  runSpec
	srv   *pgcluster.Server
	bin   string
	dbURL string
	pool  *pgxpool.Pool
	ttl   time.Duration
	renew time.Duration
	hold  time.Duration
	seq   int
	// acquisitions hears of acquisitions, when not nil (and not full).
	acquisitions chan int64
	active       []*worker
	gone         []*worker
}

func runFaults(t *testing.T, srv *pgcluster.Server, bins map[string]string, spec runSpec) *report {
	t.Helper()
	ctx := context.Background()
	r := &run{t: t, spec: spec, srv: srv, bin: bins[""], dbURL: srv.URL("postgres"),
		ttl: 2 * time.Second, renew: 500 * time.Millisecond, hold: 20 * time.Millisecond}
	if spec.weaken != "" {
		// Long enough that a freeze lands inside the open transaction.
		r.bin, r.hold = bins["weak"], 100*time.Millisecond
	}
	pool, err := pgxpool.New(ctx, r.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r.pool = pool
	r.reset(ctx)

	for range spec.workers {
		r.start()
	}
	defer r.stopAll()
	rep := &report{spec: spec, injected: make(map[string]int), failovers: make(map[string][]time.Duration), ttl: r.ttl, renew: r.renew}

	// Faults at random moments until the run's time is up.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	end := time.Now().Add(spec.duration)
	lastRestart := time.Now()
	for time.Now().Before(end) {
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		kind := spec.faults[rng.IntN(len(spec.faults))]
		if kind == restart && time.Since(lastRestart) < 10*time.Second {
			continue
		}
		if r.inject(ctx, kind, rep) {
			rep.injected[kind]++
			if kind == restart {
				lastRestart = time.Now()
			}
		}
	}
	r.stopAll()

	// The history, read after every process has stopped.
	var outcomes []faults.Outcome
	for _, w := range slices.Concat(r.active, r.gone) {
		if err := w.failed(); err != nil {
			t.Errorf("%s: %v", spec.name, err)
		}
		w.mu.Lock()
		outcomes = append(outcomes, w.outcomes...)
		w.mu.Unlock()
	}
	rep.violations, rep.tally, err = faults.Check(ctx, pool, outcomes)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return rep
}

// reset gives the run fresh lease, order and history tables.
func (r *run) reset(ctx context.Context) {
	r.t.Helper()
	if _, err := r.pool.Exec(ctx, `DROP TABLE IF EXISTS orders, worker_leases, lease_history; DROP FUNCTION IF EXISTS record_lease()`); err != nil {
		r.t.Fatal(err)
	}
	m, err := leasepkg.New(r.pool, leasepkg.DefaultConfig(leaseName))
	if err != nil {
		r.t.Fatal(err)
	}
	defer m.Close()
	if err := m.Migrate(ctx); err != nil {
		r.t.Fatal(err)
	}
	if err := faults.Prepare(ctx, r.pool); err != nil {
		r.t.Fatal(err)
	}
	if r.spec.drift {
		if _, err := r.pool.Exec(ctx, `ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key`); err != nil {
			r.t.Fatal(err)
		}
	}
}

// start starts a worker behind a proxy of its own. Every other worker
// writes in a transaction held open briefly, so that a holder can be
// frozen with the fence's row lock held.
func (r *run) start() {
	r.t.Helper()
	r.seq++
	u, err := url.Parse(r.dbURL)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := faults.NewProxy(u.Host)
	if err != nil {
		r.t.Fatal(err)
	}
	u.Host = p.Addr()
	w := &worker{id: fmt.Sprintf("w%d", r.seq), proxy: p, done: make(chan struct{}), intx: make(chan struct{}, 1)}
	args := []string{"-dsn", u.String(), "-name", leaseName, "-id", w.id, "-ttl", r.ttl.String(),
		"-renew", r.renew.String(), "-lock-timeout", (r.ttl / 4).String(), "-policy", r.spec.policy}
	if r.seq%2 == 0 || r.spec.weaken != "" || r.spec.drift {
		args = append(args, "-hold", r.hold.String(), "-writers", fmt.Sprint(max(r.spec.writers, 1)))
	}
	if r.spec.weaken != "" {
		args = append(args, "-weaken", r.spec.weaken)
	}
	w.cmd = exec.Command(r.bin, args...)
	w.cmd.Stderr = os.Stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			var epoch int64
			if _, err := fmt.Sscanf(line, "acq %d", &epoch); err == nil {
				w.mu.Lock()
				w.acquired = append(w.acquired, epoch)
				w.mu.Unlock()
				select {
				case r.acquisitions <- epoch:
				default:
				}
			}
			if strings.HasPrefix(line, "intx ") {
				select {
				case w.intx <- struct{}{}:
				default:
				}
			}
			if o, ok := faults.ParseLine(w.id, line); ok {
				w.mu.Lock()
				w.outcomes = append(w.outcomes, o)
				w.mu.Unlock()
			}
		}
		err := w.cmd.Wait()
		w.mu.Lock()
		w.exit = err
		w.mu.Unlock()
	}()
	r.active = append(r.active, w)
}

// stopAll ends every worker (SIGTERM, then SIGKILL after a grace period)
// and closes the proxies. It is safe to call twice.
func (r *run) stopAll() {
	for _, w := range r.active {
		w.signal(syscall.SIGCONT)
		w.signal(syscall.SIGTERM)
	}
	grace := time.After(3 * time.Second)
	for _, w := range r.active {
		select {
		case <-w.done:
		case <-grace:
			w.signal(syscall.SIGKILL)
			<-w.done
		}
		w.proxy.Close()
	}
	r.gone = append(r.gone, r.active...)
	r.active = nil
}

// failed reports a worker that ended with an error of its own, not by a
// signal the suite sent.
func (w *worker) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(w.exit, &exit) && exit.ExitCode() > 0 {
		return fmt.Errorf("worker %s: %w", w.id, w.exit)
	}
	return nil
}

func (w *worker) signal(sig syscall.Signal) {
	if w.cmd.Process != nil {
		_ = w.cmd.Process.Signal(sig)
	}
}

// holder returns the worker that holds the lease now by the database's
// clock, its epoch, and the database's time.
func (r *run) holder(ctx context.Context) (*worker, int64, time.Time) {
	var id string
	var epoch int64
	var now time.Time
	err := r.pool.QueryRow(ctx, `SELECT holder, epoch, clock_timestamp() FROM worker_leases
 WHERE name = $1 AND expires_at > clock_timestamp()`, leaseName).Scan(&id, &epoch, &now)
	if err != nil {
		return nil, 0, time.Time{}
	}
	for _, w := range r.active {
		if w.id == id {
			return w, epoch, now
		}
	}
	return nil, 0, time.Time{}
}

// inject injects one fault of kind and reports whether it did.
func (r *run) inject(ctx context.Context, kind string, rep *report) bool {
	if kind == restart {
		if err := r.srv.Restart(); err != nil {
			r.t.Fatalf("restart: %v", err)
		}
		return true
	}
	w, epoch, t0 := r.holder(ctx)
	if w == nil {
		return false // between holders: nothing to aim at
	}
	// measure records how long the lease took to pass on: it polls for
	// the first commit under a later epoch, for at most ten TTLs.
	measure := func() {
		for range 200 {
			if d, ok, err := faults.Failover(ctx, r.pool, epoch, t0); err == nil && ok {
				rep.failovers[kind] = append(rep.failovers[kind], d)
				return
			}
			time.Sleep(r.ttl / 20)
		}
	}
	past := r.ttl + r.ttl/2
	switch kind {
	case kill:
		w.signal(syscall.SIGKILL)
		<-w.done
		w.proxy.Close()
		r.active = slices.DeleteFunc(r.active, func(x *worker) bool { return x == w })
		r.gone = append(r.gone, w)
		r.start()
		measure()
	case pause:
		w.signal(syscall.SIGSTOP)
		time.Sleep(past)
		w.signal(syscall.SIGCONT)
		measure()
	case freeze:
		if !w.waitInTx() {
			return false // the holder writes no transactions
		}
		w.signal(syscall.SIGSTOP)
		time.Sleep(2 * r.ttl)
		w.signal(syscall.SIGCONT)
		measure()
	case partitionTx:
		if !w.waitInTx() {
			return false
		}
		heal := w.proxy.Partition()
		measure()
		heal()
	case stall:
		resume := w.proxy.Stall()
		time.Sleep(past)
		resume()
		measure()
	case delay:
		restore := w.proxy.Delay(r.renew / 2)
		time.Sleep(2 * r.ttl)
		restore()
	case cut:
		w.proxy.Cut()
	case partition:
		heal := w.proxy.Partition()
		time.Sleep(2 * r.ttl)
		heal()
		measure()
	}
	return true
}

// waitInTx waits until w has a fenced transaction open, for at most two
// seconds.
func (w *worker) waitInTx() bool {
	select {
	case <-w.intx: // drain a stale notice
	default:
	}
	select {
	case <-w.intx:
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

// TestPromotion runs workers against a primary with a streaming standby,
// stops the primary at once mid-run (pg_ctl stop -m immediate) and promotes
// the standby, as a failover manager would; every worker's proxy then
// leads to the new primary. With synchronous replication the checker must
// find nothing on the new primary: no stale write, no acknowledged write
// lost, no epoch granted twice. With asynchronous replication the lease
// cannot promise that, and the run reports what it finds.
func TestPromotion(t *testing.T) {
	bins := buildWorkers(t)
	for _, tc := range []struct {
		name string
		sync bool
	}{{"synchronous replication", true}, {"asynchronous replication", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var settings []string
			if tc.sync {
				settings = []string{"synchronous_standby_names = '*'", "synchronous_commit = on"}
			}
			primary := startCluster(t, settings...)
			standby, err := primary.StartStandby(pgcluster.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := standby.Stop(); err != nil {
					t.Error(err)
				}
			})
			rep := runPromotion(t, primary, standby, bins, runSpec{name: "promotion, " + tc.name, policy: "term", workers: 6, duration: 20 * time.Second, writers: 2})
			t.Log(rep)
			if rep.tally.Committed == 0 || rep.afterPromotion == 0 {
				t.Fatalf("%d writes committed, %d after the promotion: the run tested nothing", rep.tally.Committed, rep.afterPromotion)
			}
			if tc.sync && (rep.violations.Any() || len(rep.twice) > 0) {
				t.Errorf("synchronous replication: %v; epochs acquired by two holders %v", rep.violations, rep.twice)
			}
		})
	}
}

// promotionReport is what a promotion run did and found.
type promotionReport struct {
	*report
	afterPromotion int           // writes committed on the promoted standby
	firstCommit    time.Duration // from the promotion to the first commit on it
	twice          []int64       // epochs that two workers said they acquired
	killedAt       int64         // the epoch acquired just before the primary stopped
}

func (r *promotionReport) String() string {
	return fmt.Sprintf("%v\n   primary stopped right after the acquisition of epoch %d; after the promotion: %d writes committed, the first %v after it; epochs acquired by two holders: %v",
		r.report, r.killedAt, r.afterPromotion, r.firstCommit.Round(time.Millisecond), r.twice)
}

func runPromotion(t *testing.T, primary, standby *pgcluster.Server, bins map[string]string, spec runSpec) *promotionReport {
	t.Helper()
	ctx := context.Background()
	r := &run{t: t, spec: spec, srv: primary, bin: bins[""], dbURL: primary.URL("postgres"),
		ttl: 2 * time.Second, renew: 500 * time.Millisecond, hold: 20 * time.Millisecond}
	pool, err := pgxpool.New(ctx, r.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	r.pool = pool
	r.reset(ctx)
	// The workers' readers send on it; made before they start.
	r.acquisitions = make(chan int64, 1)
	for range spec.workers {
		r.start()
	}
	defer r.stopAll()
	rep := &promotionReport{report: &report{spec: spec, injected: map[string]int{"primary stopped, standby promoted": 1},
		failovers: map[string][]time.Duration{}, ttl: r.ttl, renew: r.renew}}

	// 1. Run on the primary. Then kill the holder, and as soon as another
	// worker says it acquired the lease, stop the primary at once (its
	// last commits may not have reached the standby) and promote the
	// standby.
	time.Sleep(spec.duration / 2)
	select { // an acquisition from before the kill is not the one awaited
	case <-r.acquisitions:
	default:
	}
	if w, _, _ := r.holder(ctx); w != nil {
		w.signal(syscall.SIGKILL)
		select {
		case e := <-r.acquisitions:
			rep.killedAt = e
		case <-time.After(5 * r.ttl):
			t.Fatal("no acquisition after the holder was killed")
		}
	}
	pool.Close()
	if err := primary.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(); err != nil {
		t.Fatal(err)
	}
	r.dbURL = standby.URL("postgres")
	for _, w := range r.active {
		w.proxy.Redirect(standby.Addr())
	}
	if pool, err = pgxpool.New(ctx, r.dbURL); err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r.pool = pool
	var promoted time.Time
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&promoted); err != nil {
		t.Fatal(err)
	}

	// 2. Run on the promoted standby, then read its history.
	time.Sleep(spec.duration / 2)
	r.stopAll()
	var outcomes []faults.Outcome
	holders := map[int64][]string{}
	for _, w := range r.gone {
		if err := w.failed(); err != nil {
			t.Errorf("%s: %v", spec.name, err)
		}
		w.mu.Lock()
		outcomes = append(outcomes, w.outcomes...)
		for _, e := range w.acquired {
			holders[e] = append(holders[e], w.id)
		}
		w.mu.Unlock()
	}
	for e, hs := range holders {
		if len(hs) > 1 {
			rep.twice = append(rep.twice, e)
		}
	}
	slices.Sort(rep.twice)
	rep.violations, rep.tally, err = faults.Check(ctx, pool, outcomes)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	var first *time.Time
	if err := pool.QueryRow(ctx, `SELECT count(*), min(pg_xact_commit_timestamp(xmin)) FROM orders
 WHERE pg_xact_commit_timestamp(xmin) > $1`, promoted).Scan(&rep.afterPromotion, &first); err != nil {
		t.Fatal(err)
	}
	if first != nil {
		rep.firstCommit = first.Sub(promoted)
	}
	return rep
}
