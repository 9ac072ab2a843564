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
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/leasepkg"
)

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
