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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// path is a way of leading and writing that a worker takes through
// leasepkg (the worker's -lead and -write).
type path struct{ lead, write string }

func (p path) String() string { return p.lead + "/" + p.write }

// paths are every way the suite leads and writes: Hold and Campaign on a
// Manager, Campaign on a Client's Manager (which also campaigns for eight
// further leases, so that its renewals are batched), and writes through
// Tx, Fence on the worker's own transaction, and their database/sql forms.
// Workers are given them in turn; every worker observes the lease.
var paths = []path{
	{"hold", "tx"}, {"hold", "fence"},
	{"campaign", "tx"}, {"campaign", "fence"},
	{"campaign", "txsql"}, {"campaign", "fencesql"},
	{"client", "tx"}, {"client", "fence"},
}

// managerPaths are the paths without a Client, which renews PerTerm
// leases only.
var managerPaths = slices.DeleteFunc(slices.Clone(paths), func(p path) bool { return p.lead == "client" })

// worker is one worker process and the proxy it reaches the database by.
type worker struct {
	id    string
	path  path
	cmd   *exec.Cmd
	proxy *faults.Proxy
	done  chan struct{}
	intx  chan struct{} // a write of this worker is in its open transaction
	quiet chan struct{} // closed when it stopped leading (after SIGUSR1)
	ready chan struct{} // closed when it handles the suite's signals

	mu        sync.Mutex
	outcomes  []faults.Outcome
	acquired  []int64  // the epochs it said it acquired
	acqPhases []string // the phase in which it said each
	observed  []faults.Observation
	exit      error // set when the worker ended
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
	// phase is the fault being injected, or "all" when they are mixed,
	// for the workers' readers to stamp what they read with.
	phase atomic.Pointer[string]

	mu  sync.Mutex
	led map[path]int // acquisitions of the lease by path
}

func (r *run) setPhase(p string) { r.phase.Store(&p) }

func runFaults(t *testing.T, srv *pgcluster.Server, bins map[string]string, spec runSpec) *report {
	t.Helper()
	ctx := context.Background()
	r := &run{t: t, spec: spec, srv: srv, bin: bins[""], dbURL: srv.URL("postgres"),
		ttl: 2 * time.Second, renew: 500 * time.Millisecond, hold: 20 * time.Millisecond, led: map[path]int{}}
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

	begin := time.Now()
	r.setPhase("all, mixed")
	for i := range spec.workers {
		r.start(spec.paths[i%len(spec.paths)])
	}
	defer r.stopAll()
	rep := &report{spec: spec, injected: make(map[string]int), failovers: make(map[string][]time.Duration), ttl: r.ttl, renew: r.renew}

	// Faults at random moments until the run's time is up: one kind after
	// another, each for its share of the time and at least spec.atLeast
	// times, when the run is phased; otherwise mixed.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	lastRestart := time.Now()
	phases := [][]string{spec.faults}
	if spec.phased {
		phases = nil
		for _, k := range spec.faults {
			phases = append(phases, []string{k})
		}
	}
	for _, kinds := range phases {
		d := spec.duration / time.Duration(len(phases))
		if len(kinds) == 1 {
			r.setPhase(kinds[0])
		}
		start, n := time.Now(), 0
		for time.Since(start) < d || (n < spec.atLeast && time.Since(start) < 4*d) {
			time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
			kind := kinds[rng.IntN(len(kinds))]
			if kind == restart && time.Since(lastRestart) < 10*time.Second && !spec.phased {
				continue
			}
			if r.inject(ctx, kind, rep) {
				rep.injected[kind]++
				n++
				if kind == restart {
					lastRestart = time.Now()
				}
			}
		}
	}
	r.setPhase("after the faults")
	rep.finalLeader, rep.asked = r.finish(ctx), true
	r.stopAll()

	// The history, read after every process has stopped.
	var outcomes []faults.Outcome
	streams := map[string][]faults.Observation{}
	holders := map[int64][]string{}
	for _, w := range slices.Concat(r.active, r.gone) {
		if err := w.failed(); err != nil {
			t.Errorf("%s: %v", spec.name, err)
		}
		w.mu.Lock()
		outcomes = append(outcomes, w.outcomes...)
		streams[w.id] = w.observed
		for i, e := range w.acquired {
			holders[e] = append(holders[e], w.id)
			rep.cell(w.path.String(), w.acqPhases[i]).epochs++
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
	if rep.observers, err = faults.CheckObservers(ctx, pool, leaseName, streams); err != nil {
		t.Fatalf("check observers: %v", err)
	}
	rep.breakdown(outcomes, r.pathOf)
	rep.elapsed = time.Since(begin)
	return rep
}

// pathOf returns the path of the worker that wrote the order called key.
func (r *run) pathOf(key string) string {
	id, _, _ := strings.Cut(key, "-")
	for _, w := range slices.Concat(r.active, r.gone) {
		if w.id == id {
			return w.path.String()
		}
	}
	return "?"
}

// finish tells every worker to stop leading and writing (SIGUSR1), and
// waits until each has, and until every worker's observer reports what the
// lease row says: the final leader, its epoch, and that it is no longer
// held. It returns what disagreed, or "" when all agreed within five TTLs.
func (r *run) finish(ctx context.Context) string {
	for _, w := range r.active {
		w.signal(syscall.SIGUSR1)
	}
	deadline := time.Now().Add(5 * r.ttl)
	for {
		var want faults.Observation
		err := r.pool.QueryRow(ctx, `SELECT holder, epoch, expires_at > clock_timestamp() FROM worker_leases WHERE name = $1`,
			leaseName).Scan(&want.Holder, &want.Epoch, &want.Held)
		var off []string
		if err != nil {
			off = append(off, fmt.Sprintf("lease row: %v", err))
		}
		for _, w := range r.active {
			select {
			case <-w.quiet:
			default:
				off = append(off, w.id+" still leads")
				continue
			}
			w.mu.Lock()
			var last faults.Observation
			if n := len(w.observed); n > 0 {
				last = w.observed[n-1]
			}
			w.mu.Unlock()
			if last != want {
				off = append(off, fmt.Sprintf("%s observed %+v", w.id, last))
			}
		}
		if len(off) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("lease row %+v; %s", want, strings.Join(off, ", "))
		}
		time.Sleep(r.renew / 5)
	}
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
	if err := orders.Migrate(ctx, r.pool); err != nil {
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

// start starts a worker that takes path p behind a proxy of its own. Every
// worker keeps every other write's transaction open briefly, several
// writers at once, so that whichever holds the lease can be frozen with
// the fence's row lock held.
func (r *run) start(p path) {
	r.t.Helper()
	r.seq++
	u, err := url.Parse(r.dbURL)
	if err != nil {
		r.t.Fatal(err)
	}
	prx, err := faults.NewProxy(u.Host)
	if err != nil {
		r.t.Fatal(err)
	}
	u.Host = prx.Addr()
	w := &worker{id: fmt.Sprintf("w%d", r.seq), path: p, proxy: prx, done: make(chan struct{}), intx: make(chan struct{}, 1), quiet: make(chan struct{}), ready: make(chan struct{})}
	args := []string{"-dsn", u.String(), "-name", leaseName, "-id", w.id, "-ttl", r.ttl.String(),
		"-renew", r.renew.String(), "-lock-timeout", (r.ttl / 4).String(), "-policy", r.spec.policy,
		"-lead", p.lead, "-write", p.write, "-observe"}
	if p.lead == "client" {
		args = append(args, "-extra", "8")
	}
	args = append(args, "-hold", r.hold.String(), "-writers", fmt.Sprint(max(r.spec.writers, 1)))
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
			phase := *r.phase.Load()
			var epoch int64
			if _, err := fmt.Sscanf(line, "acq %d", &epoch); err == nil {
				w.mu.Lock()
				w.acquired = append(w.acquired, epoch)
				w.acqPhases = append(w.acqPhases, phase)
				w.mu.Unlock()
				r.mu.Lock()
				r.led[p]++
				r.mu.Unlock()
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
			switch line {
			case "quiet":
				close(w.quiet)
			case "ready":
				close(w.ready)
			}
			if o, ok := faults.ParseObservation(line); ok {
				w.mu.Lock()
				w.observed = append(w.observed, o)
				w.mu.Unlock()
			}
			if o, ok := faults.ParseLine(w.id, line); ok {
				o.Path, o.Phase = p.String(), phase
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
	// A SIGUSR1 that came before the worker handles it would end the
	// process, as the signal's default action does, and the worker would
	// never say that it stopped leading: the suite signals only a worker
	// that said it is ready.
	select {
	case <-w.ready:
	case <-w.done:
		w.mu.Lock()
		defer w.mu.Unlock()
		r.t.Fatalf("worker %s ended before it was ready: %v", w.id, w.exit)
	case <-time.After(30 * time.Second):
		r.t.Fatalf("worker %s did not say it was ready within 30s", w.id)
	}
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
	switch kind {
	case kill, pause, freeze, partitionTx, stall, partition:
		// The lease passes on: to the path that has led least, the other
		// contenders stopped meanwhile, so that every path leads in turn.
		defer r.steer(w)()
	}
	past := r.ttl + r.ttl/2
	switch kind {
	case kill:
		w.signal(syscall.SIGKILL)
		<-w.done
		w.proxy.Close()
		r.active = slices.DeleteFunc(r.active, func(x *worker) bool { return x == w })
		r.gone = append(r.gone, w)
		measure()
		r.start(w.path)
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

// steer picks, among the workers other than the holder h, one whose path
// has acquired the lease least often, and stops every other one (SIGSTOP),
// so that the lease passes to it when the fault ends h's term; the
// function it returns lets them go on.
func (r *run) steer(h *worker) func() {
	r.mu.Lock()
	var next *worker
	for _, w := range r.active {
		if w != h && (next == nil || r.led[w.path] < r.led[next.path]) {
			next = w
		}
	}
	r.mu.Unlock()
	var stopped []*worker
	for _, w := range r.active {
		if w != h && w != next {
			w.signal(syscall.SIGSTOP)
			stopped = append(stopped, w)
		}
	}
	return func() {
		for _, w := range stopped {
			w.signal(syscall.SIGCONT)
		}
	}
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
