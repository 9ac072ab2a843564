package leasepkg_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// renewalCounter is a pgx tracer that counts the renewal statements a pool
// sends: for each batched renewal, how many leases it carried, and how many
// lone per-term renewals there were.
type renewalCounter struct {
	mu      sync.Mutex
	batches []int         // leases per batched renewal, in the order sent
	lone    int           // lone renewals
	sent    chan struct{} // signalled after each batched renewal
}

func newRenewalCounter() *renewalCounter {
	return &renewalCounter{sent: make(chan struct{}, 1)}
}

func (c *renewalCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch data.SQL {
	case leasepkg.RenewManySQL:
		c.batches = append(c.batches, len(data.Args[0].([]string)))
		select {
		case c.sent <- struct{}{}:
		default:
		}
	case leasepkg.RenewTermSQL:
		c.lone++
	}
	return ctx
}

func (c *renewalCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// counts returns the leases per batched renewal so far, and the lone renewals.
func (c *renewalCounter) counts() ([]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.batches...), c.lone
}

// waitBatches waits until n more batched renewals have been sent, or fails
// the test after a deadline.
func (c *renewalCounter) waitBatches(t *testing.T, n int) {
	t.Helper()
	limit := time.After(30 * time.Second)
	for range n {
		select {
		case <-c.sent:
		case <-limit:
			t.Fatalf("gave up waiting for %d batched renewals", n)
		}
	}
}

// clientPool connects to a fresh, migrated database with the query
// parameters in params added to its URL (application_name,
// pool_max_conns), and tracer, if not nil, on every connection.
func clientPool(t *testing.T, dsn string, params url.Values, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newClient returns a Client of holder on pool, with short timings
// unless edit changes them.
func newClient(t *testing.T, pool *pgxpool.Pool, holder string, edit func(*leasepkg.Config)) *leasepkg.Client {
	t.Helper()
	cfg := leasepkg.DefaultConfig("")
	cfg.Holder = holder
	cfg.TTL = 5 * time.Second
	cfg.RenewInterval = 200 * time.Millisecond
	cfg.LockTimeout = time.Second
	if edit != nil {
		edit(&cfg)
	}
	c, err := leasepkg.NewClient(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// holding is a set of leases held by Hold, each running until release is
// closed or its context ends.
type holding struct {
	started sync.WaitGroup
	ctxs    map[string]context.Context // each term's context
	results map[string]chan error      // what each Hold returned
	release chan struct{}
	mu      sync.Mutex
}

// holdAll holds every lease of names through c's Managers, and returns once
// all are held.
func holdAll(t *testing.T, c *leasepkg.Client, names []string) *holding {
	t.Helper()
	h := &holding{ctxs: map[string]context.Context{}, results: map[string]chan error{}, release: make(chan struct{})}
	h.started.Add(len(names))
	for _, name := range names {
		m, err := c.Manager(name)
		if err != nil {
			t.Fatal(err)
		}
		res := make(chan error, 1)
		h.results[name] = res
		go func() {
			held := false
			err := m.Hold(context.Background(), func(ctx context.Context, _ *leasepkg.Term) error {
				h.mu.Lock()
				h.ctxs[name] = ctx
				h.mu.Unlock()
				held = true
				h.started.Done()
				select {
				case <-ctx.Done():
				case <-h.release:
				}
				return nil
			})
			if !held {
				t.Errorf("hold %s: %v", name, err)
				h.started.Done()
			}
			res <- err
		}()
	}
	done := make(chan struct{})
	go func() { h.started.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("gave up waiting for the leases to be held")
	}
	t.Cleanup(h.stop)
	if t.Failed() {
		t.FailNow()
	}
	return h
}

// stop ends every Hold that still runs.
func (h *holding) stop() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

func (h *holding) ctx(name string) context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ctxs[name]
}

func names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return s
}

// migrate makes the lease schema on pool.
func migrate(t *testing.T, c *leasepkg.Client) {
	t.Helper()
	m, err := c.Manager("migrator")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestClientRenewsInOneStatement: a Client holding many leases renews
// them all in one statement per tick, and sends no lone renewal.
func TestClientRenewsInOneStatement(t *testing.T) {
	t.Parallel()
	tracer := newRenewalCounter()
	pool := clientPool(t, pgtest.DB(t), nil, tracer)
	c := newClient(t, pool, "many", nil)
	migrate(t, c)
	const n = 50
	holdAll(t, c, names("shard", n))

	// Two: the signal of one sent before all were held may be waiting,
	// and the next may have read the Client's terms before the last was
	// held; every batch sent after that second one read them after.
	tracer.waitBatches(t, 2)
	before, _ := tracer.counts()
	tracer.waitBatches(t, 3)
	batches, lone := tracer.counts()
	if lone != 0 {
		t.Errorf("%d lone renewals, want none: every renewal in the batch", lone)
	}
	if len(batches)-len(before) < 3 {
		t.Fatalf("batches %v after %v, want 3 more", batches, before)
	}
	for i, size := range batches[len(before):] {
		if size != n {
			t.Errorf("batched renewal %d carried %d leases, want all %d", len(before)+i, size, n)
		}
	}
}

// TestClientLostAmongMany: a term that another holder took over, among
// many that a Client holds, is reported lost by its renewal, and it alone:
// its Hold returns ErrLeaseLost and its context ends, the others hold on.
func TestClientLostAmongMany(t *testing.T) {
	t.Parallel()
	tracer := newRenewalCounter()
	dsn := pgtest.DB(t)
	pool := clientPool(t, dsn, nil, tracer)
	var mu sync.Mutex
	lost := map[string]int{}
	c := newClient(t, pool, "many", func(cfg *leasepkg.Config) {
		cfg.Observer = leasepkg.ObserverFunc(func(e leasepkg.Event) {
			if e.Kind == leasepkg.Lost {
				mu.Lock()
				lost[e.Lease.Name]++
				mu.Unlock()
			}
		})
	})
	migrate(t, c)
	all := names("tenant", 20)
	h := holdAll(t, c, all)
	victim := all[7]

	// Another holder takes the victim's lease over once it has expired.
	if _, err := pool.Exec(context.Background(), `UPDATE worker_leases SET expires_at = clock_timestamp() WHERE name = $1`, victim); err != nil {
		t.Fatal(err)
	}
	thiefCfg := leasepkg.DefaultConfig(victim)
	thiefCfg.Holder = "thief"
	thief, err := leasepkg.New(pool, thiefCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer thief.Close()
	if _, err := thief.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-h.results[victim]:
		if !errors.Is(err, leasepkg.ErrLeaseLost) {
			t.Fatalf("Hold of the lease taken over returned %v, want ErrLeaseLost", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Hold of the lease taken over did not return")
	}
	if h.ctx(victim).Err() == nil {
		t.Error("the lost term's context is not done")
	}
	tracer.waitBatches(t, 2) // the others are renewed after the loss
	c.Close()                // delivers the events queued
	for _, name := range all {
		if name == victim {
			continue
		}
		if err := h.ctx(name).Err(); err != nil {
			t.Errorf("lease %s, held all along: its context ended (%v)", name, context.Cause(h.ctx(name)))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lost) != 1 || lost[victim] != 1 {
		t.Errorf("lost events %v, want one, for %s", lost, victim)
	}
}

// TestClientConnections: a Client holding 1,000 leases on a pool of one
// connection uses at most two (the pool's and the renewal's), and a
// Client observing all 1,000 uses at most two (the pool's, for reads, and
// one listening connection), as pg_stat_activity counts them by
// application_name.
func TestClientConnections(t *testing.T) {
	t.Parallel()
	const n = 1000
	dsn := pgtest.DB(t)
	tracer := newRenewalCounter()
	hpool := clientPool(t, dsn, url.Values{"application_name": {"lease-holder"}, "pool_max_conns": {"1"}}, tracer)
	opool := clientPool(t, dsn, url.Values{"application_name": {"lease-observer"}, "pool_max_conns": {"1"}}, nil)
	holder := newClient(t, hpool, "holder", nil)
	observer := newClient(t, opool, "observer", nil)
	migrate(t, holder)
	all := names("partition", n)

	// Observe every lease from the second Client; each counts once it sees
	// the holder hold its lease.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen sync.WaitGroup
	seen.Add(n)
	var wg sync.WaitGroup
	for _, name := range all {
		m, err := observer.Manager(name)
		if err != nil {
			t.Fatal(err)
		}
		once := sync.OnceFunc(seen.Done)
		wg.Go(func() {
			_ = m.Observe(ctx, func(info leasepkg.LeaderInfo) {
				if info.Held && info.Lease.Holder == "holder" {
					once()
				}
			})
		})
	}
	defer wg.Wait()
	defer cancel()

	holdAll(t, holder, all)
	tracer.waitBatches(t, 2)
	allSeen := make(chan struct{})
	go func() { seen.Wait(); close(allSeen) }()
	select {
	case <-allSeen:
	case <-time.After(2 * time.Minute):
		t.Fatal("the observers did not all see the leases held")
	}

	var conns int
	check := func(app string) {
		t.Helper()
		if err := hpool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&conns); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d connections", app, conns)
		if conns > 2 {
			t.Errorf("%s: %d connections at %d leases, want at most 2", app, conns, n)
		}
	}
	check("lease-holder")
	check("lease-observer")
}

// TestClientAcquiresManyOnOnePool: Hold of thousands of leases at once on
// a pool of one connection holds them all, though acquiring them one
// after another takes longer than the TTL: each term's deadline starts
// when its acquisition's turn comes, not while it queues for the pool.
func TestClientAcquiresManyOnOnePool(t *testing.T) {
	t.Parallel()
	pool := clientPool(t, pgtest.DB(t), url.Values{"pool_max_conns": {"1"}}, nil)
	c := newClient(t, pool, "many", func(cfg *leasepkg.Config) {
		cfg.TTL = 500 * time.Millisecond
		cfg.RenewInterval = 200 * time.Millisecond
		cfg.LockTimeout = 100 * time.Millisecond
	})
	migrate(t, c)
	holdAll(t, c, names("tenant", 3000))
}

// campaignCounter is a pgx tracer that counts a Client's readings of the
// leases its campaigns wait for, how many leases each carried, and the
// batches (acquisitions) sent.
type campaignCounter struct {
	mu      sync.Mutex
	reads   []int
	batches int
	read    chan struct{} // signalled when a reading has been answered
}

// readingKey marks the context of a reading, from its start to its end.
type readingKey struct{}

func (c *campaignCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL == leasepkg.LeadersSQL {
		c.mu.Lock()
		c.reads = append(c.reads, len(data.Args[0].([]string)))
		c.mu.Unlock()
		return context.WithValue(ctx, readingKey{}, true)
	}
	return ctx
}

func (c *campaignCounter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(readingKey{}) != nil {
		select {
		case c.read <- struct{}{}:
		default:
		}
	}
}

func (c *campaignCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	c.batches++
	c.mu.Unlock()
	return ctx
}

func (c *campaignCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *campaignCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (c *campaignCounter) counts() ([]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.reads...), c.batches
}

func (c *campaignCounter) waitReads(t *testing.T, n int) {
	t.Helper()
	limit := time.After(30 * time.Second)
	for range n {
		select {
		case <-c.read:
		case <-limit:
			t.Fatalf("gave up waiting for %d readings of the waited-for leases", n)
		}
	}
}

// TestClientCampaignsWaitTogether: a Client's campaigns for leases that
// another Client holds wait together: one reading of all of them a tick,
// and no acquisition attempt while the leases are held; when the holder
// stops renewing, they take every lease over.
func TestClientCampaignsWaitTogether(t *testing.T) {
	t.Parallel()
	const n = 50
	dsn := pgtest.DB(t)
	counter := &campaignCounter{read: make(chan struct{}, 1)}
	hpool := clientPool(t, dsn, nil, nil)
	cpool := clientPool(t, dsn, nil, counter)
	timing := func(cfg *leasepkg.Config) {
		cfg.TTL = 2 * time.Second
		cfg.RenewInterval = 300 * time.Millisecond
		cfg.LockTimeout = 500 * time.Millisecond
	}
	first := newClient(t, hpool, "first", timing)
	second := newClient(t, cpool, "second", timing)
	migrate(t, first)
	all := names("shard", n)
	holdAll(t, first, all)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var held sync.WaitGroup
	held.Add(n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, name := range all {
		m, err := second.Manager(name)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_ = m.Campaign(ctx, func(ctx context.Context, term *leasepkg.Term) error {
				if term.Lease().Holder != "second" {
					t.Errorf("campaign for %s holds %v", name, term.Lease())
				}
				held.Done()
				<-ctx.Done()
				return nil
			})
		})
	}

	// Once every campaign has tried once and waits, the readings carry
	// all the leases, and no campaign tries again while they are held.
	counter.waitReads(t, 2)
	reads0, batches0 := counter.counts()
	counter.waitReads(t, 3)
	reads, batches := counter.counts()
	if batches != batches0 {
		t.Errorf("%d acquisition attempts while the leases were held, want none", batches-batches0)
	}
	for _, size := range reads[len(reads0):] {
		if size != n {
			t.Errorf("a reading carried %d leases, want all %d", size, n)
		}
	}

	first.Close() // stops renewing: the leases expire
	allHeld := make(chan struct{})
	go func() { held.Wait(); close(allHeld) }()
	select {
	case <-allHeld:
	case <-time.After(time.Minute):
		t.Fatal("the waiting campaigns did not take the leases over")
	}
}

// TestClientCloseEndsCampaigns: closing a Client ends its campaigns that
// wait for a lease held elsewhere, and its observers, with ErrClosed.
func TestClientCloseEndsCampaigns(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DB(t)
	counter := &campaignCounter{read: make(chan struct{}, 1)}
	first := newClient(t, clientPool(t, dsn, nil, nil), "first", nil)
	second := newClient(t, clientPool(t, dsn, nil, counter), "second", nil)
	migrate(t, first)
	holdAll(t, first, []string{"shard"})
	m, err := second.Manager("shard")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		ended <- m.Campaign(context.Background(), func(context.Context, *leasepkg.Term) error {
			t.Error("the campaign acquired a lease held elsewhere")
			return nil
		})
	}()
	observed := make(chan leasepkg.LeaderInfo, 1)
	observing := make(chan error, 1)
	go func() {
		observing <- m.Observe(context.Background(), func(info leasepkg.LeaderInfo) {
			select {
			case observed <- info:
			default:
			}
		})
	}()
	counter.waitReads(t, 1) // the campaign waits
	<-observed              // the observer has read the lease
	second.Close()
	for what, ch := range map[string]chan error{"Campaign": ended, "Observe": observing} {
		select {
		case err := <-ch:
			if !errors.Is(err, leasepkg.ErrClosed) {
				t.Errorf("%s after Close returned %v, want ErrClosed", what, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s did not return after its Client was closed", what)
		}
	}
}

// TestOpenClient: OpenClient checks durability as Open does, refusing
// sessions whose commits can be lost unless AllowAsyncCommit is set, and
// opens a Client whose Managers hold leases.
func TestOpenClient(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DB(t)
	open := func(dsn string, allow bool) (*leasepkg.Client, error) {
		cfg := leasepkg.DefaultConfig("")
		cfg.DSN = dsn
		cfg.AllowAsyncCommit = allow
		return leasepkg.OpenClient(context.Background(), cfg)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	async := u.String()

	if c, err := open(async, false); !errors.Is(err, leasepkg.ErrAsyncCommit) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("OpenClient with synchronous_commit off: %v, want ErrAsyncCommit", err)
	}
	c, err := open(async, true)
	if err != nil {
		t.Fatalf("OpenClient with synchronous_commit off and AllowAsyncCommit: %v", err)
	}
	c.Close()

	c, err = open(dsn, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	migrate(t, c)
	m, err := c.Manager("shard")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
}
