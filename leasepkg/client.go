package leasepkg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Client holds many leases (one per shard, tenant or partition) on one
// pool. [Client.Manager] hands out a [Manager] per lease name, each with the
// whole single-lease API (Acquire, Hold, Campaign, Fence, Tx, Leader,
// Observe); what they share is the Client's:
//
//   - One renewal statement per tick. The Client renews every term that its
//     Managers' Hold and Campaign hold in one UPDATE ... FROM unnest(...)
//     every RenewInterval, on one connection of its own, and each term still
//     gets its own answer: renewed, or lost (the row no longer names its
//     holder at its epoch, unexpired by the database's clock), or a failed
//     statement that proves nothing. A term's deadline, its epoch and term
//     checks and its stop-work-before-expiry are those of a lone Manager's.
//   - One listening connection for every Observe of its Managers, opened
//     while any of them observes.
//   - One reading a tick of every lease that its Managers' Campaign calls
//     wait for, on the renewal connection: a campaign tries to acquire
//     again only when its lease is free or about to expire.
//   - The pool, for acquisitions, fenced writes and reads, and one queue of
//     events for Config.Observer, in order across all the leases. Hold and
//     Campaign acquire at most as many leases at once as the pool has
//     connections, so that a term's deadline does not run out while it
//     queues for one.
//
// A Client holding 1,000 leases therefore uses the connections of its pool
// (one is enough) and one renewal connection, plus the listening connection
// while it observes; docs/performance.md has the figures.
//
// A Client renews PerTerm leases only: a PerRenewal renewal bumps the epoch
// under a row lock that waits for the holder's own fenced writes, and one
// busy lease would hold back the renewal of all the others. A Client is
// safe for concurrent use.
type Client struct {
	cfg    Config
	pool   *pgxpool.Pool
	renew  *pgxpool.Pool // the batched renewals, releases, and TerminateBlockers' polls
	owned  bool          // Close closes pool too
	events *eventQueue   // nil without an Observer

	// turns holds a token for each acquisition of Hold and Campaign in
	// flight, at most the pool's size (acquireTurn).
	turns chan struct{}

	stop chan struct{} // closed by Close: the renewal loop ends
	done chan struct{} // closed when the renewal loop has ended

	mu       sync.Mutex
	closed   bool
	managers map[string]*Manager
	terms    map[*renewing]struct{} // started terms, renewed every tick

	listener listener

	// watched are the leases that campaigns wait for, each with the
	// channels of its waiters: the renewal loop reads them all in one
	// statement a tick (readWatched).
	watchMu sync.Mutex
	watched map[string]map[chan leaderAnswer]struct{}
}

// leaderAnswer is what a reading of the watched leases says of one.
type leaderAnswer struct {
	info LeaderInfo
	err  error
}

// NewClient returns a Client whose Managers acquire, write and read on
// pool, which the caller keeps and closes after the Client. cfg configures
// every lease of the Client (holder, TTL, renewal interval, timeouts,
// observer); its Name is the default lease of nothing and may be empty,
// and its DSN is ignored. cfg.Policy must be PerTerm. Renewals run on one
// connection of the Client's own, with pool's connection settings, so that
// a saturated pool cannot delay them. NewClient does no I/O, and so checks
// neither the schema nor durability: call [Client.CheckDurability], and
// Migrate or CheckSchema of one of its Managers, before acquiring.
func NewClient(pool *pgxpool.Pool, cfg Config) (*Client, error) {
	cfg.DSN, cfg.Name = "", ""
	if err := cfg.validateClient(); err != nil {
		return nil, err
	}
	rc := pool.Config().Copy()
	rc.MinConns, rc.MaxConns = 0, 1
	renew, err := pgxpool.NewWithConfig(context.Background(), rc)
	if err != nil {
		return nil, fmt.Errorf("renewal pool: %w", err)
	}
	c := &Client{
		cfg:      cfg,
		pool:     pool,
		renew:    renew,
		turns:    make(chan struct{}, max(pool.Config().MaxConns, 1)),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		managers: make(map[string]*Manager),
		terms:    make(map[*renewing]struct{}),
		watched:  make(map[string]map[chan leaderAnswer]struct{}),
	}
	c.listener.c = c
	if cfg.Observer != nil {
		c.events = newEventQueue(cfg.Observer)
	}
	go c.renewLoop()
	return c, nil
}

// OpenClient connects to cfg.DSN and returns a Client that owns the
// connection pool; size the pool in the DSN (pool_max_conns, pgxpool's
// default being the larger of 4 and the number of CPUs). It checks
// durability and the schema as [Open] does: it fails with an error
// wrapping ErrAsyncCommit where the database can lose the commits it
// acknowledges, unless cfg.AllowAsyncCommit is set, and with one wrapping
// ErrSchema where the lease table cannot hold the fence. The context
// governs connecting and the checks.
func OpenClient(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.DSN == "" {
		return nil, errors.New("lease config: dsn must not be empty")
	}
	check := cfg
	check.DSN, check.Name = "", ""
	if err := check.validateClient(); err != nil {
		return nil, err
	}
	pool, err := openPool(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	c, err := NewClient(pool, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	c.owned = true
	if err := checkOpened(ctx, pool, cfg, c.CheckDurability); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// CheckDurability verifies, as [Manager.CheckDurability] does, that the
// database cannot lose a commit that it acknowledged to the Client's
// sessions, and otherwise returns an error wrapping ErrAsyncCommit.
// [OpenClient] calls it unless Config.AllowAsyncCommit is set; [NewClient],
// which does no I/O, does not: call it after NewClient. The context
// governs the query.
func (c *Client) CheckDurability(ctx context.Context) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return newManager(c.pool, c.renew, c.cfg).CheckDurability(ctx)
}

// validateClient is Validate for a Client's config, which names no lease.
func (c Config) validateClient() error {
	if c.Policy != PerTerm {
		return fmt.Errorf("lease config: a Client renews per-term leases only, got policy %v", c.Policy)
	}
	c.Name = "client" // checked by Client.Manager, lease by lease
	return c.Validate()
}

// Manager returns the Manager of the lease called name, made on first use
// with the Client's config and name: the same Manager for the same name
// until it is closed. Its Hold and Campaign are renewed by the Client's
// batched renewal, and its Observe listens on the Client's shared
// connection. Closing it closes only it; closing the Client closes all of
// them.
func (c *Client) Manager(name string) (*Manager, error) {
	if name == "" {
		return nil, errors.New("lease config: name must not be empty")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if m, ok := c.managers[name]; ok {
		return m, nil
	}
	cfg := c.cfg
	cfg.Name = name
	m := newManager(c.pool, c.renew, cfg)
	m.client, m.events = c, c.events
	c.managers[name] = m
	return m, nil
}

// forget removes m, which is being closed, from the Client's Managers.
func (c *Client) forget(m *Manager) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.managers[m.cfg.Name] == m {
		delete(c.managers, m.cfg.Name)
	}
}

// Config returns the Client's configuration, defaults filled in; its Name
// is empty.
func (c *Client) Config() Config { return c.cfg }

// Close closes the Client's Managers, stops renewing (a term still held
// is lost when its deadline passes, and its fn's context is then
// cancelled), ends the campaigns that wait to acquire and the Observe
// calls with ErrClosed, closes the observers' listening connection, the
// renewal connection, and the pool if OpenClient made it, and waits until
// the events queued for the Observer before it have been delivered.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	managers := make([]*Manager, 0, len(c.managers))
	for _, m := range c.managers {
		managers = append(managers, m)
	}
	c.mu.Unlock()
	for _, m := range managers {
		m.Close()
	}
	close(c.stop)
	<-c.done
	c.listener.close()
	c.renew.Close()
	if c.owned {
		c.pool.Close()
	}
	if c.events != nil {
		c.events.close()
	}
}

// acquireTurn waits, for a Manager of a Client, until fewer acquisitions
// of Hold and Campaign are in flight than the pool has connections, and
// returns the function that ends this one's turn. A term's deadline starts
// before its acquisition waits for a connection: a thousand leases
// acquired at once on a small pool would otherwise queue for longer than
// the TTL, and the terms confirmed late would be given up. Waiting for a
// turn instead, each starts its deadline when its acquisition is about to
// be sent. A lone Manager does not wait. The context governs the wait.
func (m *Manager) acquireTurn(ctx context.Context) (done func(), err error) {
	if m.client == nil {
		return func() {}, nil
	}
	select {
	case m.client.turns <- struct{}{}:
		return func() { <-m.client.turns }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// renewing is a started term that its Client renews on every tick.
type renewing struct {
	t      *Term
	ctx    context.Context // the term's: done when it is lost or over
	lose   context.CancelCauseFunc
	expire func()

	mu       sync.Mutex
	deadline *time.Timer // calls expire when the lease could have expired
	over     bool        // the term no longer renews: answers for it are ignored
}

// startRenewing renews t's lease in the background until the returned
// function is called: on the Manager's own loop, or in its Client's batch.
// deadline calls expire when the lease could have expired; each confirmed
// renewal replaces it with a timer started before that renewal was sent. A
// renewal that finds the lease lost ends the term through lose.
func (m *Manager) startRenewing(ctx context.Context, t *Term, deadline *time.Timer, expire func(), lose context.CancelCauseFunc) (stop func()) {
	if m.client == nil {
		stopc := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { m.renewLoop(ctx, stopc, t, deadline, expire, lose) })
		return func() { close(stopc); wg.Wait() }
	}
	c := m.client
	r := &renewing{t: t, ctx: ctx, lose: lose, expire: expire, deadline: deadline}
	c.mu.Lock()
	c.terms[r] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.terms, r)
		c.mu.Unlock()
		r.mu.Lock()
		r.over = true
		r.deadline.Stop()
		r.mu.Unlock()
	}
}

// renewLoop renews the Client's terms every RenewInterval until Close.
func (c *Client) renewLoop() {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	tick := time.NewTicker(c.cfg.RenewInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		c.renewAll(ctx)
		c.readWatched(ctx)
	}
}

// renewAll renews every started term in one statement, and gives each its
// answer.
func (c *Client) renewAll(ctx context.Context) {
	c.mu.Lock()
	terms := make([]*renewing, 0, len(c.terms))
	for r := range c.terms {
		terms = append(terms, r)
	}
	c.mu.Unlock()
	if len(terms) == 0 {
		return
	}

	// 1. Each term's next deadline starts before the statement is sent, so
	// that a confirmed renewal extends it by no more than the database did.
	leases := make([]Lease, len(terms))
	next := make([]*time.Timer, len(terms))
	for i, r := range terms {
		leases[i] = r.t.Lease()
		next[i] = time.AfterFunc(c.cfg.workFor(), r.expire)
	}

	// 2. One statement for all of them; RenewInterval bounds it, so that a
	// stalled one leaves room for the next.
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RenewInterval)
	sent := sentNow()
	renewed, err := c.renewMany(rctx, leases)
	took := time.Since(*sent) // latency only
	cancel()

	// 3. Each term its own answer.
	for i, r := range terms {
		_, ok := renewed[leaseKey{leases[i].Name, leases[i].Epoch}]
		r.answer(leases[i], next[i], sent, took, ok, err)
	}
}

// leaseKey identifies a term among the Client's: under PerTerm its epoch
// is its own, granted to one acquisition.
type leaseKey struct {
	name  string
	epoch int64
}

// renewMany extends every lease in ls that its holder still holds at its
// epoch, unexpired by the database's clock, by the TTL from the database's
// clock, in one statement, and returns those it extended. The context
// governs the statement.
func (c *Client) renewMany(ctx context.Context, ls []Lease) (map[leaseKey]struct{}, error) {
	names := make([]string, len(ls))
	holders := make([]string, len(ls))
	epochs := make([]int64, len(ls))
	for i, l := range ls {
		names[i], holders[i], epochs[i] = l.Name, l.Holder, l.Epoch
	}
	rows, err := c.renew.Query(ctx, renewManySQL, names, holders, epochs, c.cfg.TTL.Milliseconds())
	if err != nil {
		return nil, err
	}
	renewed := make(map[leaseKey]struct{}, len(ls))
	var k leaseKey
	_, err = pgx.ForEachRow(rows, []any{&k.name, &k.epoch}, func() error {
		renewed[k] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return renewed, nil
}

// answer gives the term its renewal's answer: renewed, lost, or the error
// of a statement that proves nothing. next is the deadline that the
// renewal started; it replaces the term's deadline if the renewal was
// confirmed, and is stopped otherwise.
func (r *renewing) answer(l Lease, next *time.Timer, sent *time.Time, took time.Duration, renewed bool, err error) {
	m := r.t.m
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.over || r.ctx.Err() != nil:
		// The term ended while the statement ran: fn returned (and its
		// release may have expired the row), or its deadline passed.
		next.Stop()
	case err != nil:
		next.Stop()
		m.observe(RenewFailed, l, fmt.Errorf("renew lease %s: %w", l, err))
	case renewed:
		r.deadline.Stop()
		r.deadline = next
		r.t.confirmed.Store(sent)
		m.observeTook(Renewed, l, nil, took)
	default:
		next.Stop()
		err := fmt.Errorf("renew lease %s: %w", l, ErrLeaseLost)
		m.observe(Lost, l, err)
		r.lose(err)
	}
}

// renewManySQL is renewTermSQL for many leases at once: it extends each
// lease whose row still names its holder at its epoch, unexpired by the
// database's clock, and returns the name and epoch of each it extended; a
// lease it does not return is lost. Like renewTermSQL it changes no key
// column, so it does not wait for fenced writes' FOR KEY SHARE.
// $1 names, $2 holders, $3 epochs, $4 ttl in milliseconds.
const renewManySQL = `UPDATE worker_leases AS l
   SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
  FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(name, holder, epoch)
 WHERE l.name = r.name AND l.holder = r.holder AND l.epoch = r.epoch
   AND l.expires_at > clock_timestamp()
RETURNING l.name, l.epoch`

// listener is a Client's one listening connection, shared by every
// Observe of its Managers: it wakes the observers of a lease when an
// acquisition or a release of it notifies, and all of them when its
// connection was replaced, since notifications may have been missed.
type listener struct {
	c *Client

	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	n      int                // subscriptions
	cancel context.CancelFunc // ends the listening goroutine; nil when none runs
	done   chan struct{}      // closed when that goroutine has ended
	closed bool
}

// subscribe returns a channel that is signalled when lease name may have
// changed, and starts listening if no one was.
func (l *listener) subscribe(name string) (wake <-chan struct{}, unsubscribe func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.subs == nil {
		l.subs = make(map[string]map[chan struct{}]struct{})
	}
	if l.subs[name] == nil {
		l.subs[name] = make(map[chan struct{}]struct{})
	}
	l.subs[name][ch] = struct{}{}
	l.n++
	if l.cancel == nil && !l.closed {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		l.cancel, l.done = cancel, done
		go l.run(ctx, done)
	}
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs[name], ch)
		if len(l.subs[name]) == 0 {
			delete(l.subs, name)
		}
		l.n--
		if l.n == 0 && l.cancel != nil {
			// The last observer left: close the connection.
			l.cancel()
			l.cancel = nil
		}
	}
}

// close ends the listening goroutine, if one runs, and waits for it.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done != nil {
		<-done
	}
}

// wake signals the observers of lease name, or of every lease if all.
func (l *listener) wake(name string, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for n, chans := range l.subs {
		if !all && n != name {
			continue
		}
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default: // already signalled
			}
		}
	}
}

// run listens until ctx is done, replacing a failed connection after a
// RenewInterval.
func (l *listener) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	for {
		err := l.listenOn(ctx)
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		names := make([]string, 0, len(l.subs))
		for n := range l.subs {
			names = append(names, n)
		}
		l.mu.Unlock()
		for _, n := range names {
			e := Event{Kind: ObserveFailed, Lease: Lease{Name: n}, Err: err}
			logEvent(l.c.cfg.Logger, e, 0)
			if l.c.events != nil {
				l.c.events.push(e)
			}
		}
		if sleep(ctx, l.c.cfg.RenewInterval) != nil {
			return
		}
	}
}

// listenOn listens on a connection of its own until it fails or ctx is
// done. The connection is not the pool's: a LISTEN would go back to the
// pool with it.
func (l *listener) listenOn(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.c.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Whatever was notified before this LISTEN was missed: every observer
	// reads its lease again.
	l.wake("", true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload, false)
	}
}

// observeShared is Observe for a Manager of a Client: it reads the lease
// on the pool whenever the Client's listener says it may have changed,
// when it would expire by the database's clock, and at least every
// RenewInterval, until ctx is done or the Client is closed (ErrClosed).
func (m *Manager) observeShared(ctx context.Context, report func(LeaderInfo)) error {
	wake, unsubscribe := m.client.listener.subscribe(m.cfg.Name)
	defer unsubscribe()
	for {
		wait := m.cfg.RenewInterval
		info, err := readLeader(ctx, m.pool, m.cfg.Name)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			m.observe(ObserveFailed, Lease{Name: m.cfg.Name}, err)
		default:
			report(info)
			if info.Held && info.Remaining < wait {
				wait = info.Remaining + time.Millisecond
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-m.client.stop:
			t.Stop()
			return ErrClosed
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// waitWatched is waitForHolder for a Manager of a Client, whose campaigns
// wait together: rather than each read its lease and try it again every
// RenewInterval, the Client reads the leases that its campaigns wait for
// in one statement a tick, and a campaign tries again only when its lease
// is free, when it will expire before the next reading (then a moment
// after it expires, with a little jitter), or when the reading failed.
func (m *Manager) waitWatched(ctx context.Context) error {
	c, name := m.client, m.cfg.Name
	ch := make(chan leaderAnswer, 1)
	c.watchMu.Lock()
	if c.watched[name] == nil {
		c.watched[name] = make(map[chan leaderAnswer]struct{})
	}
	c.watched[name][ch] = struct{}{}
	c.watchMu.Unlock()
	defer func() {
		c.watchMu.Lock()
		delete(c.watched[name], ch)
		if len(c.watched[name]) == 0 {
			delete(c.watched, name)
		}
		c.watchMu.Unlock()
	}()
	jitter := func() time.Duration { return rand.N(m.cfg.RenewInterval/4 + 1) }
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-c.stop:
			return nil // closed: the next attempt says so
		case a := <-ch:
			switch {
			case a.err != nil, !a.info.Held:
				return sleep(ctx, jitter())
			case a.info.Remaining < m.cfg.RenewInterval:
				return sleep(ctx, a.info.Remaining+jitter())
			}
		}
	}
}

// readWatched reads every lease that a campaign waits for in one statement
// on the renewal connection, and tells each waiter what it says.
func (c *Client) readWatched(ctx context.Context) {
	c.watchMu.Lock()
	names := make([]string, 0, len(c.watched))
	for name := range c.watched {
		names = append(names, name)
	}
	c.watchMu.Unlock()
	if len(names) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RenewInterval)
	infos, err := readLeaders(rctx, c.renew, names)
	cancel()
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	for _, name := range names {
		a := leaderAnswer{info: LeaderInfo{Lease: Lease{Name: name}}, err: err}
		if info, ok := infos[name]; ok {
			a.info = info
		}
		for ch := range c.watched[name] {
			select {
			case ch <- a:
			default: // the waiter has not taken the last one: it is busy
			}
		}
	}
}

// readLeaders is readLeader for many leases in one statement. A lease
// that was never acquired is missing from the answer.
func readLeaders(ctx context.Context, q querier, names []string) (map[string]LeaderInfo, error) {
	rows, err := q.Query(ctx, leadersSQL, names)
	if err != nil {
		return nil, err
	}
	infos := make(map[string]LeaderInfo, len(names))
	var info LeaderInfo
	_, err = pgx.ForEachRow(rows, []any{&info.Lease.Name, &info.Lease.Holder, &info.Lease.Epoch, &info.Lease.Term, &info.ExpiresAt, &info.Held, &info.Remaining}, func() error {
		infos[info.Lease.Name] = info
		return nil
	})
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// leadersSQL is leaderSQL for many leases. $1 names.
const leadersSQL = `SELECT name, holder, epoch, term, expires_at,
       expires_at > clock_timestamp(),
       greatest(expires_at - clock_timestamp(), interval '0')
  FROM worker_leases WHERE name = ANY ($1::text[])`
