//leaseguard:lease

// Package negative has clock reads that do not decide a write, and writes
// that no clock decides, one case a function; each says why it is fine.
package negative

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"example.com/clockutil"
	"example.com/sqlutil"
	"github.com/jackc/pgx/v5/pgxpool"
)

const renew = `UPDATE worker_leases SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE name = $1`

var pool *pgxpool.Pool

func latency(ctx context.Context) error {
	start := time.Now() // ok: latency only
	_, err := pool.Exec(ctx, renew, "a", 15000)
	log.Printf("renew took %v", time.Since(start)) // ok: latency only
	return err
}

func tickerLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every) // ok: a ticker schedules
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pool.Exec(ctx, renew, "a", 15000)
	}
}

func sleep(ctx context.Context) {
	time.Sleep(time.Second) // ok: sleeping schedules
	pool.Exec(ctx, renew, "a", 15000)
}

func timeout(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second) // ok: a context deadline schedules
	defer cancel()
	pool.Exec(ctx, renew, "a", 15000)
}

func deadline(ctx context.Context, ttl time.Duration) {
	ctx, cancel := context.WithDeadline(ctx, time.Now().Add(ttl/2)) // ok: a deadline schedules, even from a clock read
	defer cancel()
	pool.Exec(ctx, renew, "a", 15000)
}

func timer(ctx context.Context, end time.Time) {
	t := time.NewTimer(time.Until(end)) // ok: a timer schedules
	<-t.C
	pool.Exec(ctx, renew, "a", 15000)
}

func branchAfter(ctx context.Context) error {
	start := time.Now()
	_, err := pool.Exec(ctx, renew, "a", 15000)
	if time.Since(start) > time.Second { // ok: after the write, logging only
		log.Print("slow renewal")
	}
	return err
}

func noSQL() string {
	return time.Now().Format(time.Kitchen) // ok: no SQL here
}

func errorMessage(ctx context.Context) error {
	if _, err := pool.Exec(ctx, renew, "a", 15000); err != nil {
		return fmt.Errorf("renew at %v: %w", time.Now(), err) // ok: an error message
	}
	return nil
}

type fakeClock struct{}

func (fakeClock) Now() string { return "now" }

func shadowed(ctx context.Context) {
	time := fakeClock{}
	pool.Exec(ctx, renew, time.Now(), 15000) // ok: a local time whose Now is no clock
}

func stringsAndComments(ctx context.Context) {
	// time.Now() in a comment is no clock read.
	pool.Exec(ctx, `SELECT 'time.Now()'`) // ok: a string
}

func databaseClock(ctx context.Context) {
	pool.Exec(ctx, `UPDATE worker_leases SET expires_at = now() + interval '15 seconds'`) // ok: the database decides
}

func duration(ctx context.Context, ttl time.Duration) {
	pool.Exec(ctx, renew, "a", ttl.Milliseconds()) // ok: a duration is no clock read
}

func parsed(ctx context.Context, s string) error {
	t, err := time.Parse(time.RFC3339, s) // ok: parsed, not read
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, renew, "a", t)
	return err
}

func parsedElsewhere(ctx context.Context, s string) {
	t, _ := clockutil.Parse(s) // ok: a helper that reads no clock
	pool.Exec(ctx, renew, "a", t)
}

func unixConstant(ctx context.Context) {
	pool.Exec(ctx, renew, "a", time.Unix(0, 0)) // ok: a fixed instant
}

func fromDatabase(ctx context.Context) {
	var expires time.Time
	pool.QueryRow(ctx, `SELECT expires_at FROM worker_leases WHERE name = $1`, "a").Scan(&expires)
	pool.Exec(ctx, `UPDATE orders SET seen = $1`, expires) // ok: the database's own time
}

// Histogram stands in for a metrics library.
type Histogram interface{ Observe(float64) }

func metrics(ctx context.Context, h Histogram) {
	start := time.Now()
	pool.Exec(ctx, renew, "a", 15000)
	h.Observe(time.Since(start).Seconds()) // ok: a metric
}

func logged(ctx context.Context) {
	pool.Exec(ctx, renew, "a", 15000)
	log.Printf("renewed at %s", time.Now()) // ok: a log line after the write
}

var errLost = errors.New("lost lease; refuse all writes")

func suppressed(ctx context.Context) error {
	//leaseguard:allow clock -- the lease this package keeps is advisory, its expiry only informs an operator
	_, err := pool.Exec(ctx, `UPDATE worker_leases SET expires_at = $2 WHERE name = $1`, "a", time.Now())
	if err != nil {
		return errLost
	}
	return nil
}

func loopWithDeadlineCtx(ctx context.Context) {
	for ctx.Err() == nil { // ok: a context, not a clock
		pool.Exec(ctx, renew, "a", 15000)
	}
}

type worker struct {
	name    string
	lastLog time.Time
}

func (w *worker) otherField(ctx context.Context) {
	w.lastLog = time.Now() // ok: a field that no SQL reads
	pool.Exec(ctx, renew, w.name, 15000)
}

func goroutineLog(ctx context.Context) {
	go func() { log.Print(time.Now()) }() // ok: a log line in a goroutine
	pool.Exec(ctx, renew, "a", 15000)
}

func afterInLoop(ctx context.Context) {
	for i := 0; i < 3; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second): // ok: time.After schedules
		}
		pool.Exec(ctx, renew, "a", 15000)
	}
}

func branchOnBothPaths(ctx context.Context, start time.Time) {
	if time.Since(start) > time.Second { // ok: the write runs on both paths
		log.Print("slow")
	}
	pool.Exec(ctx, renew, "a", 15000)
}

func contextErr(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if ctx.Err() != nil { // ok: a context deadline decided, which schedules
		return
	}
	pool.Exec(ctx, renew, "a", 15000)
}

func record(t time.Time) { log.Print(t) }

func recordedElsewhere(ctx context.Context) {
	record(time.Now()) // ok: handed to a function that runs no SQL
	pool.Exec(ctx, renew, "a", 15000)
}

func unusedClosure(ctx context.Context) func() string {
	pool.Exec(ctx, renew, "a", 15000)
	return func() string { return time.Now().String() } // ok: not near the write
}

func helperWithDatabaseTime(ctx context.Context) {
	var at time.Time
	pool.QueryRow(ctx, `SELECT clock_timestamp() + interval '15 seconds'`).Scan(&at)
	sqlutil.Extend(ctx, pool, "a", at) // ok: the database's clock
}

func durations(ctx context.Context) {
	ttl := 15 * time.Second
	pool.Exec(ctx, renew, "a", (ttl + 5*time.Second).Milliseconds()) // ok: durations, no clock
}

func timerReset(ctx context.Context, t *time.Timer, end time.Time) {
	t.Reset(time.Until(end)) // ok: rescheduling
	pool.Exec(ctx, renew, "a", 15000)
}

func constantSQL(ctx context.Context) {
	const q = `DELETE FROM orders WHERE written_at < clock_timestamp() - interval '1 day'`
	pool.Exec(ctx, q) // ok: the database's clock, in the SQL
}

func batchTimeout(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeoutCause(ctx, d, errLost) // ok: a deadline schedules
	defer cancel()
	pool.QueryRow(ctx, `SELECT 1`)
}

func clockBeforeReturnOnly(start time.Time) bool {
	return time.Since(start) > time.Minute // ok: decides nothing that runs SQL
}

func tickerDrivenRenewal(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every) // ok: the schedule, not the decision
	defer t.Stop()
	for range t.C {
		if _, err := pool.Exec(ctx, renew, "a", 15000); err != nil {
			return err
		}
	}
	return nil
}

func elapsedMetric(ctx context.Context, h Histogram) error {
	start := time.Now()
	defer func() { h.Observe(time.Since(start).Seconds()) }() // ok: latency in a deferred metric
	_, err := pool.Exec(ctx, renew, "a", 15000)
	return err
}

func slowInLoop(ctx context.Context, names []string) {
	for _, name := range names {
		start := time.Now()
		pool.Exec(ctx, renew, name, 15000)
		if time.Since(start) > time.Second { // ok: the write runs on every iteration either way
			log.Print("slow renewal")
		}
	}
}

func slowForever(ctx context.Context) {
	for {
		start := time.Now()
		pool.Exec(ctx, renew, "a", 15000)
		if time.Since(start) > time.Second { // ok: the write runs on every iteration either way
			log.Print("slow renewal")
		}
	}
}

func lateInLoop(ctx context.Context, names []string, deadline time.Time) {
	for _, name := range names {
		if time.Now().After(deadline) { // ok: the write runs on every iteration either way
			log.Print("late")
		}
		pool.Exec(ctx, renew, name, 15000)
	}
}

// A worker id made from the clock reaches a function that writes a stack
// trace to SQL, but only its log line: the trace is built from the
// recovered value, not from the id that the helper was also given.

type jobWorker struct {
	id      string
	bufSize int
}

func randomID() string {
	h := sha256.Sum256([]byte(time.Now().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h[:])[:6]
}

func newJobWorker() *jobWorker {
	return &jobWorker{id: randomID(), bufSize: 64} // ok: the id is only logged
}

func stackTrace(r any, size int, logID string) string {
	buf := new(bytes.Buffer)
	if _, err := fmt.Fprintf(buf, "%v %d", r, size); err != nil {
		log.Printf("worker %s: %v", logID, err)
	}
	return buf.String()
}

func (w *jobWorker) recoverPanic(ctx context.Context, logID string) {
	r := recover()
	if r == nil {
		return
	}
	pool.Exec(ctx, `UPDATE jobs SET last_error = $1`, stackTrace(r, w.bufSize, logID))
}

func (w *jobWorker) workOne(ctx context.Context, job func()) {
	defer w.recoverPanic(ctx, "worker "+w.id)
	job()
}

// An object from another package that holds a clock read among its fields
// (a scheduler) is not a time: passing it on passes no clock.
func scheduler(ctx context.Context) {
	pool.Exec(ctx, `SELECT $1`, clockutil.NewScheduler()) // ok: not a time
}

// An identifier made from the clock (a ULID) names the row it is written
// as; it decides nothing as a time.
func identifier(ctx context.Context) {
	pool.Exec(ctx, `INSERT INTO jobs (id) VALUES ($1)`, clockutil.NewID(clockutil.Stamp())) // ok: an identifier
}

// A name formatted from the clock (a run's id) is an identifier too,
// wherever the struct that holds it goes.
type run struct {
	ID    string
	Input string
	Args  any
}

func namedRun(ctx context.Context, name string) {
	r := run{ID: fmt.Sprintf("sched-%s-trigger-%s", name, time.Now().Format(time.RFC3339Nano))} // ok: an identifier
	pool.Exec(ctx, `INSERT INTO runs (id) VALUES ($1)`, r.ID)                                   // ok: an identifier
}

// So is a name joined to the clock by a separator: a migration's version
// prefix, a display name.
func versionedName(ctx context.Context, name string) {
	version := time.Now().UTC().Format("20060102150405")
	pool.Exec(ctx, `UPDATE worker_leases SET holder = $1 WHERE name = $2`, fmt.Sprintf("%s_%s", version, name), name)                // ok: an identifier
	pool.Exec(ctx, `UPDATE worker_leases SET holder = $1 WHERE name = $2`, fmt.Sprintf("%s-%d", name, time.Now().UnixMilli()), name) // ok: an identifier
}

func cancelRun(ctx context.Context, r *run) {
	if r.ID == "" { // ok: an identifier decides
		return
	}
	pool.Exec(ctx, `DELETE FROM runs WHERE id = $1`, r.ID) // ok: an identifier
}

// A clock written as text into a field (a run's input) is data for the
// run: the package does not read the field back as a time, so other runs'
// inputs do not carry it.
func scheduleRun(ctx context.Context, name string) {
	now := time.Now()
	args := now.Format(time.RFC3339)
	r := run{ID: name, Input: now.Format(time.RFC3339), Args: &args} // ok: text, written as a stamp
	pool.Exec(ctx, `INSERT INTO runs (id, input, args) VALUES ($1, $2, $3)`, r.ID, r.Input, r.Args)
}

func replayRun(ctx context.Context, query string, r *run) {
	pool.Exec(ctx, query, r.ID, r.Input, r.Args) // ok: another run's input
}

// idleConn is a connection that holds the session's temporary functions
// and is closed once idle: whether it is idle is the process's own
// measure, and closing it drops only what the session made.
type idleConn struct {
	active  time.Time
	maxIdle time.Duration
}

const dropSessionFuncs = `DROP FUNCTION pg_temp.lock_and_decrease(integer); DROP TYPE pg_temp.remaining`

var discardAll = "DISCARD ALL"

func (c *idleConn) closeIdle(ctx context.Context) {
	if c.active.Add(c.maxIdle).After(time.Now()) { // ok: only the session's own objects are dropped
		return
	}
	c.cleanup(ctx)
}

func (c *idleConn) cleanup(ctx context.Context) {
	pool.Exec(ctx, dropSessionFuncs)
	pool.Exec(ctx, discardAll)
}

// Events matched by key, stamped with the clock only to order them in Go:
// the helper sends each event's key and id, never its time, so neither
// the slice it is given nor a field it reads of another carries the
// clock to SQL.
type event struct {
	ID   string
	Key  string
	Seen time.Time
}

type eventOrder struct {
	id   string
	seen time.Time
}

func emitSleeps(ctx context.Context, keys []string) error {
	events := make([]event, 0, len(keys))
	for _, k := range keys {
		events = append(events, event{ID: k, Key: "sleep:" + k, Seen: time.Now()}) // ok: orders the events in Go
	}
	return matchEvents(ctx, events)
}

func matchEvents(ctx context.Context, events []event) error {
	byID := make(map[string]event)
	order := make([]eventOrder, 0, len(events))
	for _, e := range events {
		byID[e.ID] = e
		pool.Exec(ctx, `SELECT id FROM match_conditions WHERE event_key = $1`, e.Key)
		order = append(order, eventOrder{id: e.ID, seen: e.Seen})
	}
	slices.SortFunc(order, func(a, b eventOrder) int { return b.seen.Compare(a.seen) })
	for _, o := range order {
		pool.Exec(ctx, `UPDATE match_conditions SET satisfied = true WHERE event_id = $1`, byID[o.id].ID)
	}
	return nil
}
