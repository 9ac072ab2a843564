//leaseguard:lease

// Package flows has clock reads that reach SQL, one case a function.
package flows

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"time"

	"example.com/clockutil"
	"example.com/sqlutil"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jmoiron/sqlx"
)

const renew = `UPDATE worker_leases SET expires_at = $2 WHERE name = $1`

var pool *pgxpool.Pool

func direct(ctx context.Context) {
	pool.Exec(ctx, renew, "a", time.Now()) // want `time.Now flows into an argument of Exec: the database clock must decide, not the process clock`
}

func arithmetic(ctx context.Context, ttl time.Duration) {
	pool.Exec(ctx, renew, "a", time.Now().Add(ttl)) // want `time.Now flows into an argument of Exec`
}

func assigned(ctx context.Context, ttl time.Duration) {
	now := time.Now() // want `time.Now flows into an argument of Exec`
	expires := now.Add(ttl)
	pool.Exec(ctx, renew, "a", expires)
}

func unixSeconds(ctx context.Context) {
	pool.Exec(ctx, renew, "a", time.Now().Unix()) // want `time.Now flows into an argument of Exec`
}

func since(ctx context.Context, start time.Time) {
	pool.Exec(ctx, renew, "a", time.Since(start)) // want `time.Since flows into an argument of Exec`
}

func until(ctx context.Context, end time.Time) {
	pool.QueryRow(ctx, renew, "a", time.Until(end) > 0) // want `time.Until flows into an argument of QueryRow`
}

func conn(ctx context.Context, c *pgx.Conn) {
	c.Exec(ctx, renew, "a", time.Now().UTC()) // want `time.Now flows into an argument of Exec`
}

func tx(ctx context.Context, tx pgx.Tx) {
	tx.Exec(ctx, renew, "a", time.Now()) // want `time.Now flows into an argument of Exec`
}

func batch(b *pgx.Batch) {
	b.Queue(renew, "a", time.Now()) // want `time.Now flows into an argument of Queue`
}

func copyFrom(ctx context.Context) {
	rows := pgx.CopyFromRows([][]any{{"a", time.Now()}}) // want `time.Now flows into an argument of CopyFrom`
	pool.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"name", "at"}, rows)
}

func databaseSQL(ctx context.Context, db *sql.DB) {
	db.ExecContext(ctx, renew, "a", time.Now()) // want `time.Now flows into an argument of ExecContext`
}

func databaseSQLTx(ctx context.Context, tx *sql.Tx) {
	tx.QueryRowContext(ctx, renew, "a", time.Now().Add(time.Second)) // want `time.Now flows into an argument of QueryRowContext`
}

func statement(st *sql.Stmt) {
	st.Exec("a", time.Now()) // want `time.Now flows into an argument of Exec`
}

// DBTX is the interface sqlc generates.
type DBTX interface {
	Exec(ctx context.Context, query string, args ...interface{}) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...interface{}) *sql.Row
}

func sqlc(ctx context.Context, db DBTX) {
	db.Exec(ctx, renew, "a", time.Now()) // want `time.Now flows into an argument of Exec`
}

func sprintf(ctx context.Context) {
	q := fmt.Sprintf("UPDATE worker_leases SET expires_at = '%s'", time.Now().Format(time.RFC3339)) // want `time.Now flows into the SQL text of Exec`
	pool.Exec(ctx, q)
}

func sprintfTime(ctx context.Context) {
	at := fmt.Sprintf("%d", time.Now().Unix()) // want `time.Now flows into an argument of Exec`
	pool.Exec(ctx, `UPDATE worker_leases SET expires_at = to_timestamp($1)`, at)
}

func sprintfDate(ctx context.Context) {
	t := time.Now() // want `time.Now flows into an argument of Exec`
	day := fmt.Sprintf("%d-%02d-%02d", t.Year(), t.Month(), t.Day())
	pool.Exec(ctx, `DELETE FROM worker_leases WHERE expires_at < $1::date`, day)
}

func appended(ctx context.Context) {
	args := []any{"a"}
	args = append(args, time.Now()) // want `time.Now flows into an argument of Exec`
	pool.Exec(ctx, renew, args...)
}

func namedArgs(ctx context.Context) {
	pool.Exec(ctx, `UPDATE worker_leases SET expires_at = @at`, pgx.NamedArgs{"at": time.Now()}) // want `time.Now flows into an argument of Exec`
}

type params struct {
	name string
	at   time.Time
}

func structField(ctx context.Context) {
	p := params{name: "a", at: time.Now()} // want `time.Now flows into an argument of Exec`
	pool.Exec(ctx, renew, p.name, p.at)
}

// store keeps a clock reading in one method and writes it in another.
type store struct {
	pool    *pgxpool.Pool
	checked time.Time
	now     func() time.Time
}

func (s *store) check() { s.checked = time.Now() } // want `time.Now flows into an argument of Exec`

func (s *store) write(ctx context.Context) { s.pool.Exec(ctx, renew, "a", s.checked) }

func closure(ctx context.Context) {
	now := time.Now() // want `time.Now flows into an argument of Exec`
	do := func() { pool.Exec(ctx, renew, "a", now) }
	do()
}

func funcValue(ctx context.Context) {
	clock := time.Now
	pool.Exec(ctx, renew, "a", clock()) // want `time.Now flows into an argument of Exec`
}

func newStore() *store {
	return &store{now: time.Now}
}

func (s *store) writeNow(ctx context.Context) { s.pool.Exec(ctx, renew, "a", s.now()) } // want `time.Now flows into an argument of Exec`

// Clock is an injected clock, as benbjohnson/clock and k8s.io/utils/clock have.
type Clock interface{ Now() time.Time }

func injected(ctx context.Context, c Clock) {
	pool.Exec(ctx, renew, "a", c.Now()) // want `flows.Clock.Now flows into an argument of Exec`
}

func localHelper() time.Time { return time.Now().Round(time.Millisecond) }

func sameHelper(ctx context.Context) {
	pool.Exec(ctx, renew, "a", localHelper()) // want `time.Now via flows.localHelper flows into an argument of Exec`
}

func otherHelper(ctx context.Context) {
	pool.Exec(ctx, renew, "a", clockutil.Now()) // want `time.Now via clockutil.Now flows into an argument of Exec`
}

func (s *store) extend(ctx context.Context, at time.Time) {
	s.pool.Exec(ctx, renew, "a", at)
}

func sameWrapper(ctx context.Context, s *store) {
	s.extend(ctx, time.Now()) // want `time.Now flows into an argument of flows.store.extend, which passes it to SQL`
}

func otherWrapper(ctx context.Context) {
	sqlutil.Extend(ctx, pool, "a", clockutil.Deadline(time.Second)) // want `time.Now via clockutil.Deadline flows into an argument of sqlutil.Extend, which passes it to SQL`
}

func branchBefore(ctx context.Context, deadline time.Time) error {
	if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
		return fmt.Errorf("lease expired")
	}
	_, err := pool.Exec(ctx, `UPDATE orders SET done = true`)
	return err
}

func fatalBefore(ctx context.Context, deadline time.Time) {
	if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
		log.Fatal("lease expired") // never returns: log.Fatal calls os.Exit
	}
	pool.Exec(ctx, `UPDATE orders SET done = true`)
}

// stop never returns, through a helper of its own.
func stop(msg string) { exit(msg) }

func exit(msg string) {
	log.Print(msg)
	os.Exit(1)
}

func stopBefore(ctx context.Context, deadline time.Time) {
	if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
		stop("lease expired")
	}
	pool.Exec(ctx, `UPDATE orders SET done = true`)
}

// warn returns.
func warn(msg string) { log.Print(msg) }

func warnBefore(ctx context.Context, deadline time.Time) {
	if time.Now().After(deadline) { // Exec runs either way: nothing decided
		warn("lease expired")
	}
	pool.Exec(ctx, `UPDATE orders SET done = true`)
}

func identity[T any](v T) T { return v }

func generic(ctx context.Context) {
	pool.Exec(ctx, renew, "a", identity(time.Now())) // want `time.Now flows into an argument of Exec`
}

func query(ctx context.Context) {
	rows, _ := pool.Query(ctx, `SELECT * FROM orders WHERE at < $1`, time.Now()) // want `time.Now flows into an argument of Query`
	rows.Close()
}

var started = time.Now() // want `time.Now flows into an argument of Exec`

func global(ctx context.Context) { pool.Exec(ctx, renew, "a", started) }

func channel(ctx context.Context) {
	ch := make(chan time.Time, 1)
	ch <- time.Now() // want `time.Now flows into an argument of Exec`
	pool.Exec(ctx, renew, "a", <-ch)
}

func methodValue(ctx context.Context, c Clock) {
	now := c.Now
	pool.Exec(ctx, renew, "a", now()) // want `flows.Clock.Now flows into an argument of Exec`
}

func conversion(ctx context.Context) {
	pool.Exec(ctx, renew, "a", float64(time.Now().UnixNano())/1e9) // want `time.Now flows into an argument of Exec`
}

// What came back from SQL is the database's answer, not the clock's,
// whatever the statement's arguments were.

func rowsAffectedDecides(ctx context.Context, ttl time.Duration) error {
	tag, err := pool.Exec(ctx, renew, "a", time.Now().Add(ttl)) // want `time.Now flows into an argument of Exec`
	if err != nil {
		return err
	}
	// ok: the database decides the branch below
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("lease lost")
	}
	_, err = pool.Exec(ctx, `INSERT INTO history (name) VALUES ('a')`)
	return err
}

func (s *store) renewTag(ctx context.Context, at time.Time) (pgconn.CommandTag, error) {
	return s.pool.Exec(ctx, renew, "a", at)
}

func wrapperResultDecides(ctx context.Context, s *store) {
	tag, _ := s.renewTag(ctx, time.Now()) // want `time.Now flows into an argument of flows.store.renewTag, which passes it to SQL`
	// ok: the database decides the branch below
	if tag.RowsAffected() != 1 {
		return
	}
	pool.Exec(ctx, `INSERT INTO history (name) VALUES ('a')`)
}

// Each clock read that reaches a call is reported, at the read.

func twoReads(ctx context.Context, renewing bool, ttl time.Duration) {
	at := time.Now() // want `time.Now flows into an argument of Exec`
	if renewing {
		at = time.Now().Add(ttl) // want `time.Now flows into an argument of Exec`
	}
	pool.Exec(ctx, renew, "a", at)
}

func twoArguments(ctx context.Context) {
	pool.Exec(ctx, `UPDATE worker_leases SET renewed_at = $1, expires_at = $2`, time.Now(), time.Now()) // want `time.Now flows into an argument of Exec` `time.Now flows into an argument of Exec`
}

func twoInOneBranch(ctx context.Context, deadline, start time.Time) {
	if time.Since(start) > time.Until(deadline) { // want `time.Since decides whether Exec runs` `time.Until decides whether Exec runs`
		return
	}
	pool.Exec(ctx, `UPDATE orders SET done = true`)
}

// A branch in a loop decides a write that it skips with continue, though
// the write is reachable from both of its successors through the loop.

func continuePast(ctx context.Context, names []string, deadlines map[string]time.Time) {
	for _, name := range names {
		if time.Now().After(deadlines[name]) { // want `time.Now decides whether Exec runs`
			continue
		}
		pool.Exec(ctx, `UPDATE orders SET done = true WHERE name = $1`, name)
	}
}

func continueForever(ctx context.Context, deadline time.Time) {
	for {
		if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
			continue
		}
		pool.Exec(ctx, `UPDATE orders SET done = true`)
	}
}

func nestedBranch(ctx context.Context, deadline time.Time, urgent bool) {
	if time.Now().Before(deadline) { // want `time.Now decides whether Exec runs`
		if urgent {
			pool.Exec(ctx, `UPDATE orders SET done = true`)
		}
	}
}

func fatalInLoop(ctx context.Context, deadline time.Time) {
	for {
		if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
			log.Fatal("lease expired") // never returns
		}
		pool.Exec(ctx, `UPDATE orders SET done = true`)
	}
}

func stopsRenewing(ctx context.Context, deadline time.Time) {
	for {
		pool.Exec(ctx, renew, "a", 15000)
		// The clock decides whether Exec runs again.
		if time.Now().After(deadline) { // want `time.Now decides whether Exec runs`
			break
		}
	}
}

// An expiry instant set from the clock where a key was seen, and tested
// with time.Until where the key is deleted: the subtraction derives from
// both reads, so both decide the delete.

type entry struct {
	revision  int64
	expiredAt time.Time
}

func saveEntry(store map[string]*entry, key string, ttl time.Duration) {
	store[key] = &entry{expiredAt: time.Now().Add(ttl)} // want `time.Now decides whether Exec runs`
}

func expireEntry(ctx context.Context, store map[string]*entry, key string) {
	e := store[key]
	if time.Until(e.expiredAt) > 0 { // want `time.Until decides whether Exec runs`
		return
	}
	pool.Exec(ctx, `DELETE FROM kv WHERE name = $1 AND revision = $2`, key, e.revision)
}

// A helper of the package whose result derives from its parameter carries
// the clock through: a time formatted for SQL stays a clock value.

func formatted(t time.Time, layout string) string { return t.Format(layout) }

func throughFormat(ctx context.Context) {
	pool.Exec(ctx, renew, "a", formatted(time.Now(), time.RFC3339)) // want `time.Now flows into an argument of Exec`
}

// A constructor of the package returns a struct whose field it set from a
// parameter: the caller's clock is in the field.

type term struct {
	holder string
	until  time.Time
}

func newTerm(holder string, started time.Time) term {
	t := term{holder: holder}
	t.until = started.Add(time.Minute)
	return t
}

func termUntil(ctx context.Context) {
	t := newTerm("a", time.Now()) // want `time.Now flows into an argument of Exec`
	pool.Exec(ctx, renew, t.holder, t.until)
}

// A function of the package that returns what it built from its own read
// (a term, a decision) passes the read on: it is reported at the read,
// which is where a fix goes, naming the function that returned it.

type elector struct{ clock Clock }

func (e *elector) elect(ctx context.Context) (term, error) {
	started := e.clock.Now() // want `flows.Clock.Now \(returned by flows.elector.elect\) flows into an argument of Exec`
	_, err := pool.Exec(ctx, `UPDATE leader SET holder = $1`, "a")
	return newTerm("a", started), err
}

func (e *elector) lead(ctx context.Context) {
	t, err := e.elect(ctx)
	if err != nil {
		return
	}
	pool.Exec(ctx, renew, t.holder, t.until)
}

// idleRelease releases the session's advisory locks, the leases of this
// connection, when the process's clock says it has been idle: a lease
// decision, unlike dropping the session's temporary functions.
func idleRelease(ctx context.Context, active time.Time) {
	if active.Add(time.Minute).After(time.Now()) { // want `time.Now decides whether Exec runs`
		return
	}
	pool.Exec(ctx, `DROP FUNCTION pg_temp.lock_and_decrease(integer); SELECT pg_advisory_unlock_all()`)
}

// A helper of the package that sends the field that holds the clock, or
// the struct whole to a function that reads its fields elsewhere: the
// clock reaches SQL however the struct travels.
type stampedEvent struct {
	key  string
	seen time.Time
}

func stampEvents(ctx context.Context, keys []string) {
	events := make([]stampedEvent, 0, len(keys))
	for _, k := range keys {
		events = append(events, stampedEvent{key: k, seen: time.Now()}) // want `time.Now flows into an argument of Exec`
	}
	insertEvents(ctx, events)
}

func insertEvents(ctx context.Context, events []stampedEvent) {
	for _, e := range events {
		pool.Exec(ctx, renew, e.key, e.seen)
	}
}

type stampedLease struct {
	Name    string
	Expires time.Time
}

func stampWhole(ctx context.Context, name string) {
	saveWhole(ctx, &stampedLease{Name: name, Expires: time.Now()}) // want `time.Now flows into an argument of flows.saveWhole, which passes it to SQL`
}

func saveWhole(ctx context.Context, e *stampedLease) {
	pool.Exec(ctx, `UPDATE worker_leases SET expires_at = (r).expires FROM (SELECT json_populate_record(NULL::worker_leases, $1) AS r) AS x WHERE name = (r).name`, e)
}

type leaseNote struct {
	Name string
	Note string
}

// A time formatted into a message, in a struct given whole to SQL: a
// description, not a time that a statement compares.
func noteWhole(ctx context.Context, name string, started time.Time) {
	saveNote(ctx, &leaseNote{Name: name, Note: fmt.Sprintf("held for %s", time.Since(started))})
}

func saveNote(ctx context.Context, n *leaseNote) {
	pool.Exec(ctx, `UPDATE worker_leases SET note = (r).note FROM (SELECT json_populate_record(NULL::worker_leases, $1) AS r) AS x WHERE name = (r).name`, n)
}

// sqlx's methods that scan into Go values send SQL as database/sql's do.
var sqlxDB *sqlx.DB

func throughSqlx(ctx context.Context) error {
	var n int64
	return sqlxDB.GetContext(ctx, &n, renew+` RETURNING 1`, "a", time.Now()) // want `time.Now flows into an argument of GetContext`
}

// A read that reaches several calls is one finding: the first call in its
// message, the others in its related lines.
func severalCalls(ctx context.Context, name string) {
	now := time.Now() // want `time.Now flows into an argument of Exec: the database`
	pool.Exec(ctx, renew, name, now)
	pool.QueryRow(ctx, renew+` RETURNING 1`, name, now)
	if now.Weekday() == time.Sunday {
		return
	}
	pool.Exec(ctx, `DELETE FROM worker_leases WHERE name = $1`, name)
}
