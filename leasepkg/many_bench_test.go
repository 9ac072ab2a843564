package leasepkg_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// The timings of the many-leases benchmarks: short, so that a failover
// takes seconds, with the default ratios (renew at a third of the TTL).
const (
	manyTTL   = 3 * time.Second
	manyRenew = time.Second
)

// BenchmarkManyLeases holds 1, 100, 1,000 and 10,000 leases in one Client
// on a pool of one connection, and measures its steady state; an op is one
// renewal tick (so ns/op is about the RenewInterval, and says nothing).
// It reports the renewal statements sent per tick, the connections the
// Client holds (pg_stat_activity by application_name), and the CPU time
// per lease-second of the Go process and, when the server is on this
// machine, of the Client's server backends. Run it with a fixed count of
// ticks: -benchtime 10x.
func BenchmarkManyLeases(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run("leases="+strconv.Itoa(n), func(b *testing.B) { benchManyLeases(b, n) })
	}
}

func benchManyLeases(b *testing.B, n int) {
	dsn := pgtest.DB(b)
	tracer := newStatementCounter()
	app := fmt.Sprintf("lease-bench-%d", n)
	pool := benchClientPool(b, dsn, app, 1, tracer)
	stats := benchClientPool(b, dsn, "lease-bench-stats", 1, nil) // measures, unmeasured
	var failed, lost atomic.Int64
	c := benchClient(b, pool, "holder", leasepkg.ObserverFunc(func(e leasepkg.Event) {
		switch e.Kind {
		case leasepkg.RenewFailed:
			failed.Add(1)
		case leasepkg.Lost:
			lost.Add(1)
		}
	}))
	logSettings(b, pool)
	stop := benchHoldAll(b, c, names("shard", n))
	defer stop()
	tracer.waitRenewals(b, 1) // one that may have begun while leases were acquired

	// Each op waits for a renewal sent after this.
	select {
	case <-tracer.sent:
	default:
	}
	before := tracer.renewals()
	cpu0, server0 := processCPU(), serverCPU(b, stats, app)
	start := time.Now()
	for b.Loop() {
		tracer.waitRenewals(b, 1)
	}
	elapsed := time.Since(start)
	cpu1, server1 := processCPU(), serverCPU(b, stats, app)
	after := tracer.renewals()
	conns := countConns(b, stats, app)

	// Figures of leases that were lost on the way would flatter: every
	// lease must still be held, and each renewal that failed is counted.
	var held int
	if err := stats.QueryRow(context.Background(), `SELECT count(*) FROM worker_leases WHERE holder = 'holder' AND expires_at > clock_timestamp()`).Scan(&held); err != nil {
		b.Fatal(err)
	}
	if held != n || lost.Load() != 0 {
		b.Fatalf("%d of %d leases held at the end, %d lost", held, n, lost.Load())
	}
	leaseSeconds := float64(n) * elapsed.Seconds()
	b.ReportMetric(float64(failed.Load())/float64(n), "failed-renewals/lease")
	b.ReportMetric(float64(after-before)/float64(b.N), "stmts/tick")
	b.ReportMetric(float64(conns), "conns")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/leaseSeconds, "cpu-µs/lease-s")
	reportServerCPU(b, server0, server1, leaseSeconds)
}

// BenchmarkLoneManagers is BenchmarkManyLeases without a Client, for
// comparison: a lone Manager per lease (New) on one shared pool of one
// connection, each renewing on its own loop and its own renewal pool. An
// op is a RenewInterval; stmts/tick is the renewal statements sent in it.
// (1,000 would need more connections than the test cluster allows.)
func BenchmarkLoneManagers(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run("leases="+strconv.Itoa(n), func(b *testing.B) { benchLoneManagers(b, n) })
	}
}

func benchLoneManagers(b *testing.B, n int) {
	ctx := context.Background()
	tracer := newStatementCounter()
	app := fmt.Sprintf("lease-lone-%d", n)
	dsn := pgtest.DB(b)
	pool := benchClientPool(b, dsn, app, 1, tracer)
	stats := benchClientPool(b, dsn, "lease-bench-stats", 1, nil) // measures, unmeasured
	logSettings(b, pool)
	release := make(chan struct{})
	var started, ended sync.WaitGroup
	started.Add(n)
	for i, name := range names("shard", n) {
		cfg := leasepkg.DefaultConfig(name)
		cfg.Holder = "holder"
		cfg.TTL, cfg.RenewInterval = manyTTL, manyRenew
		m, err := leasepkg.New(pool, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(m.Close)
		if i == 0 {
			if err := m.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
		}
		ended.Go(func() {
			held := false
			err := m.Hold(ctx, func(ctx context.Context, _ *leasepkg.Term) error {
				held = true
				started.Done()
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil
			})
			if !held {
				b.Errorf("hold %s: %v", name, err)
				started.Done()
			}
		})
	}
	started.Wait()
	defer func() { close(release); ended.Wait() }()
	_ = sleepCtx(ctx, manyRenew) // every lease renewed once

	before := tracer.renewals()
	cpu0, server0 := processCPU(), serverCPU(b, stats, app)
	start := time.Now()
	for b.Loop() {
		_ = sleepCtx(ctx, manyRenew)
	}
	elapsed := time.Since(start)
	cpu1, server1 := processCPU(), serverCPU(b, stats, app)
	after := tracer.renewals()
	conns := countConns(b, stats, app)

	leaseSeconds := float64(n) * elapsed.Seconds()
	b.ReportMetric(float64(after-before)/(elapsed.Seconds()/manyRenew.Seconds()), "stmts/tick")
	b.ReportMetric(float64(conns), "conns")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/leaseSeconds, "cpu-µs/lease-s")
	reportServerCPU(b, server0, server1, leaseSeconds)
}

// BenchmarkManyFailover: one Client holds 1,000 leases, another, on a pool
// of 1 or 4 connections, campaigns for all of them; an op is the first Client stopping its renewals (as a
// crashed process would: nothing is released) and ending when the second
// holds all 1,000. It reports the failover time, the part of it after the
// last lease expired by the database's clock (the takeovers themselves),
// and the round trips per second that the waiting campaigns send.
func BenchmarkManyFailover(b *testing.B) {
	for _, conns := range []int{1, 4} {
		b.Run("pool="+strconv.Itoa(conns), func(b *testing.B) { benchManyFailover(b, conns) })
	}
}

func benchManyFailover(b *testing.B, conns int) {
	const n = 1000
	for b.Loop() {
		b.StopTimer()
		ctx := context.Background()
		dsn := pgtest.DB(b)
		hpool := benchClientPool(b, dsn, "lease-first", 1, nil)
		counter := newStatementCounter()
		cpool := benchClientPool(b, dsn, "lease-second", conns, counter)
		first := benchClient(b, hpool, "first", nil)
		second := benchClient(b, cpool, "second", nil)
		logSettings(b, cpool)
		all := names("shard", n)
		stopFirst := benchHoldAll(b, first, all)

		// The second campaigns for every lease, and counts those it holds.
		var held atomic.Int64
		allHeld := make(chan struct{})
		cctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, name := range all {
			m, err := second.Manager(name)
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				_ = m.Campaign(cctx, func(ctx context.Context, _ *leasepkg.Term) error {
					if held.Add(1) == n {
						close(allHeld)
					}
					<-ctx.Done()
					return nil
				})
			})
		}
		// Two RenewIntervals of contention, counted after the first
		// attempts.
		_ = sleepCtx(ctx, 2*manyRenew)
		s0 := counter.total()
		waited := time.Now()
		_ = sleepCtx(ctx, 2*manyRenew)
		perSecond := float64(counter.total()-s0) / time.Since(waited).Seconds()

		var left time.Duration // until the last lease expires, by the database's clock
		b.StartTimer()
		stopped := time.Now()
		first.Close() // stops renewing; nothing is released
		if err := cpool.QueryRow(ctx, `SELECT greatest(max(expires_at) - clock_timestamp(), interval '0') FROM worker_leases`).Scan(&left); err != nil {
			b.Fatal(err)
		}
		select {
		case <-allHeld:
		case <-time.After(time.Minute + 10*manyTTL):
			b.Fatalf("the second Client holds %d of %d leases after a minute", held.Load(), n)
		}
		failover := time.Since(stopped)
		b.StopTimer()
		cancel()
		wg.Wait()
		stopFirst()
		b.ReportMetric(float64(failover.Milliseconds()), "failover-ms")
		b.ReportMetric(float64((failover - left).Milliseconds()), "after-expiry-ms")
		b.ReportMetric(perSecond, "campaign-round-trips/s")
		b.StartTimer()
	}
}

// statementCounter is a pgx tracer that counts the round trips sent (a
// statement, or a batch of them), and the renewals among them.
type statementCounter struct {
	all, renew atomic.Int64
	sent       chan struct{} // signalled after each batched renewal
}

func newStatementCounter() *statementCounter {
	return &statementCounter{sent: make(chan struct{}, 1)}
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.all.Add(1)
	if data.SQL == leasepkg.RenewManySQL || data.SQL == leasepkg.RenewTermSQL {
		c.renew.Add(1)
		select {
		case c.sent <- struct{}{}:
		default:
		}
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch (an acquisition is one, with its BEGIN
// and COMMIT) as one round trip.
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.all.Add(1)
	return ctx
}

func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (c *statementCounter) total() int64    { return c.all.Load() }
func (c *statementCounter) renewals() int64 { return c.renew.Load() }

// waitRenewals waits for n more renewal statements.
func (c *statementCounter) waitRenewals(b *testing.B, n int) {
	b.Helper()
	limit := time.After(time.Minute)
	for range n {
		select {
		case <-c.sent:
		case <-limit:
			b.Fatal("no renewal within a minute")
		}
	}
}

// benchClientPool is a pool of conns connections to dsn under application
// name app, with tracer, if not nil, on its connections.
func benchClientPool(b *testing.B, dsn, app string, conns int, tracer pgx.QueryTracer) *pgxpool.Pool {
	b.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	q.Set("pool_max_conns", strconv.Itoa(conns))
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// benchClient is a Client of holder on pool, telling obs (if not nil) of
// its leases' events, with the schema migrated.
func benchClient(b *testing.B, pool *pgxpool.Pool, holder string, obs leasepkg.Observer) *leasepkg.Client {
	b.Helper()
	cfg := leasepkg.DefaultConfig("")
	cfg.Holder = holder
	cfg.TTL, cfg.RenewInterval = manyTTL, manyRenew
	cfg.Observer = obs
	c, err := leasepkg.NewClient(pool, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	m, err := c.Manager("migrator")
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchHoldAll holds every lease of names through c's Managers, returns
// once all are held, and returns a function that ends the Holds and waits
// for them.
func benchHoldAll(b *testing.B, c *leasepkg.Client, names []string) (stop func()) {
	b.Helper()
	release := make(chan struct{})
	var started, ended sync.WaitGroup
	started.Add(len(names))
	for _, name := range names {
		m, err := c.Manager(name)
		if err != nil {
			b.Fatal(err)
		}
		ended.Go(func() {
			held := false
			err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
				held = true
				started.Done()
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil
			})
			if !held {
				// A lease lost once held is the failover's doing.
				b.Errorf("hold %s: %v", name, err)
				started.Done()
			}
		})
	}
	started.Wait()
	return sync.OnceFunc(func() { close(release); ended.Wait() })
}

// logSettings logs the server settings that decide what a commit costs.
func logSettings(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	var version, fsync, fpw, syncCommit string
	err := pool.QueryRow(context.Background(), `SELECT current_setting('server_version'), current_setting('fsync'),
       current_setting('full_page_writes'), current_setting('synchronous_commit')`).Scan(&version, &fsync, &fpw, &syncCommit)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("PostgreSQL %s: fsync=%s full_page_writes=%s synchronous_commit=%s", version, fsync, fpw, syncCommit)
}

// countConns counts the server's connections under application name app.
func countConns(b *testing.B, pool *pgxpool.Pool, app string) int {
	b.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU time that each of the server's backends under
// application name app has used, by pid, read from /proc/<pid>/schedstat
// (nanoseconds on a CPU, exact, where /proc/<pid>/stat counts 10 ms ticks
// by sampling); nil where the server is not on this machine.
func serverCPU(b *testing.B, pool *pgxpool.Pool, app string) map[int32]time.Duration {
	b.Helper()
	rows, err := pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	cpu := make(map[int32]time.Duration, len(pids))
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return nil
		}
		ns, err := strconv.ParseInt(strings.Fields(string(stat))[0], 10, 64)
		if err != nil {
			return nil
		}
		cpu[pid] = time.Duration(ns)
	}
	return cpu
}

// reportServerCPU reports the CPU time per lease-second that the backends
// alive at both readings used between them, if they could be read.
func reportServerCPU(b *testing.B, before, after map[int32]time.Duration, leaseSeconds float64) {
	if before == nil || after == nil {
		return
	}
	var used time.Duration
	for pid, t := range after {
		if t0, ok := before[pid]; ok {
			used += t - t0
		}
	}
	b.ReportMetric(float64(used.Microseconds())/leaseSeconds, "server-cpu-µs/lease-s")
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
