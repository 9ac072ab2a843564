// Package faults runs leasepkg under crashes, pauses, restarts and bad
// networks, with real worker processes (./worker), and proves from the
// database's history alone that no write landed under a stale epoch.
package faults

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// historySQL records every version of every lease row, with the
// database's clock when it was written; the commit timestamp of each
// history row (track_commit_timestamp) orders it against the orders.
const historySQL = `
CREATE TABLE lease_history (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text        NOT NULL,
    old_holder     text,
    holder         text        NOT NULL,
    old_epoch      bigint,
    epoch          bigint      NOT NULL,
    old_expires_at timestamptz,
    expires_at     timestamptz NOT NULL,
    at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION record_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lease_history (name, holder, epoch, expires_at)
        VALUES (NEW.name, NEW.holder, NEW.epoch, NEW.expires_at);
    ELSE
        INSERT INTO lease_history (name, old_holder, holder, old_epoch, epoch, old_expires_at, expires_at)
        VALUES (NEW.name, OLD.holder, NEW.holder, OLD.epoch, NEW.epoch, OLD.expires_at, NEW.expires_at);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER record_lease AFTER INSERT OR UPDATE ON worker_leases
    FOR EACH ROW EXECUTE FUNCTION record_lease();`

// Prepare adds the lease history to a migrated lease database.
func Prepare(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, historySQL)
	return err
}

// Kind is what became of one write, as a worker reports it: the first word
// of its line.
type Kind string

// The kinds of outcome.
const (
	Acked    Kind = "ack" // the write committed
	Rejected Kind = "rej" // the fence refused it (leasepkg.ErrStaleFence)
	Unknown  Kind = "unk" // the commit was not confirmed (leasepkg.ErrOutcomeUnknown)
	Failed   Kind = "err" // it failed before it was sent, or with another error
)

// Outcome is what a worker said of one write.
type Outcome struct {
	Key    string
	Holder string
	Epoch  int64
	Kind   Kind
	// Path and Phase are the suite's: the worker's way of leading and
	// writing, and the fault being injected when the worker said it.
	Path, Phase string
}

// Violations are what the checker found against the lease's promises.
type Violations struct {
	// StaleOrders are orders with epoch N committed after the acquisition
	// of epoch N+1 committed.
	StaleOrders []string
	// Backwards are history rows whose epoch is lower than the row before.
	Backwards int
	// Overlaps are takeovers made while the previous holder's lease was
	// unexpired by the database's clock.
	Overlaps int
	// SharedEpochs are epochs that the history shows with two holders.
	SharedEpochs []int64
	// Lost are acknowledged writes missing from the table.
	Lost []string
	// Phantoms are writes reported refused that are in the table.
	Phantoms []string
}

// Any reports whether anything was violated.
func (v Violations) Any() bool {
	return len(v.StaleOrders) > 0 || v.Backwards > 0 || v.Overlaps > 0 || len(v.SharedEpochs) > 0 || len(v.Lost) > 0 || len(v.Phantoms) > 0
}

func (v Violations) String() string {
	return fmt.Sprintf("stale orders %d %v, epochs backwards %d, overlapping holders %d, shared epochs %v, lost acknowledged writes %d %v, refused writes present %d %v",
		len(v.StaleOrders), first(v.StaleOrders), v.Backwards, v.Overlaps, v.SharedEpochs, len(v.Lost), first(v.Lost), len(v.Phantoms), first(v.Phantoms))
}

func first(s []string) []string { return s[:min(len(s), 5)] }

// Tally counts the writes of a run.
type Tally struct {
	Attempted, Committed, Rejected, Errors int
	UnknownFound, UnknownAbsent            int
	// SelfRejected are rejections of a holder's write by its own lease:
	// the epoch after the write's was granted to the same holder by a
	// renewal, not taken by another.
	SelfRejected int
}

// Check reads the database after a run and checks the history against the
// outcomes the workers reported.
func Check(ctx context.Context, pool *pgxpool.Pool, outcomes []Outcome) (Violations, Tally, error) {
	var v Violations
	var t Tally
	var err error
	// 1. No order with epoch N commits after the acquisition of N+1.
	v.StaleOrders, err = collect(ctx, pool, pgx.RowTo[string], `
SELECT o.order_key FROM orders o
  JOIN lease_history h ON h.name = o.lease_name AND h.epoch = o.epoch + 1 AND h.old_epoch IS DISTINCT FROM h.epoch
 WHERE pg_xact_commit_timestamp(o.xmin) > pg_xact_commit_timestamp(h.xmin)
 ORDER BY o.id`)
	if err != nil {
		return v, t, fmt.Errorf("stale orders: %w", err)
	}
	// 2. Epochs never go backwards, in commit order.
	if err := pool.QueryRow(ctx, `
SELECT count(*) FROM (
  SELECT epoch, lag(epoch) OVER (PARTITION BY name ORDER BY pg_xact_commit_timestamp(xmin), id) AS prev
    FROM lease_history) x
 WHERE epoch < prev`).Scan(&v.Backwards); err != nil {
		return v, t, fmt.Errorf("epoch order: %w", err)
	}
	// 3. A new holder takes over only a lease expired by the database clock.
	if err := pool.QueryRow(ctx, `
SELECT count(*) FROM lease_history
 WHERE old_holder IS NOT NULL AND old_holder <> holder AND old_expires_at > at`).Scan(&v.Overlaps); err != nil {
		return v, t, fmt.Errorf("overlaps: %w", err)
	}
	// 4. No epoch was granted to two holders.
	v.SharedEpochs, err = collect(ctx, pool, pgx.RowTo[int64],
		`SELECT epoch FROM lease_history GROUP BY name, epoch HAVING count(DISTINCT holder) > 1 ORDER BY epoch`)
	if err != nil {
		return v, t, err
	}

	// 5. Every acknowledged write is present; unknown outcomes are counted
	// apart, found or absent.
	present, err := collect(ctx, pool, pgx.RowTo[string], `SELECT order_key FROM orders`)
	if err != nil {
		return v, t, err
	}
	slices.Sort(present)
	has := func(k string) bool { _, ok := slices.BinarySearch(present, k); return ok }
	selfRejectable, err := renewedEpochs(ctx, pool)
	if err != nil {
		return v, t, err
	}
	for _, o := range outcomes {
		t.Attempted++
		switch o.Kind {
		case Acked:
			t.Committed++
			if !has(o.Key) {
				v.Lost = append(v.Lost, o.Key)
			}
		case Rejected:
			t.Rejected++
			if has(o.Key) {
				v.Phantoms = append(v.Phantoms, o.Key)
			}
			if selfRejectable[epochOf{Holder: o.Holder, Epoch: o.Epoch}] {
				t.SelfRejected++
			}
		case Unknown:
			if has(o.Key) {
				t.UnknownFound++
			} else {
				t.UnknownAbsent++
			}
		default: // Failed
			t.Errors++
		}
	}
	return v, t, nil
}

// collect runs a query and scans each of its rows with fn.
func collect[T any](ctx context.Context, pool *pgxpool.Pool, fn pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, fn)
}

// epochOf is an epoch as one holder held it; its fields are matched to
// the columns of renewedEpochs' query by name.
type epochOf struct {
	Holder string
	Epoch  int64
}

// renewedEpochs returns the (holder, epoch) pairs whose next epoch the same
// holder took by renewing, while its lease was unexpired: a write under
// such an epoch that is refused is refused by its own holder's lease.
func renewedEpochs(ctx context.Context, pool *pgxpool.Pool) (map[epochOf]bool, error) {
	renewed, err := collect(ctx, pool, pgx.RowToStructByName[epochOf], `
SELECT holder, old_epoch AS epoch FROM lease_history
 WHERE old_epoch IS NOT NULL AND epoch > old_epoch AND old_holder = holder AND old_expires_at > at`)
	if err != nil {
		return nil, err
	}
	m := make(map[epochOf]bool, len(renewed))
	for _, k := range renewed {
		m[k] = true
	}
	return m, nil
}

// Failover measures, for a fault that stopped the holder of epoch at the
// database time t0, how long until the first order under a later epoch
// committed, or false if none did.
func Failover(ctx context.Context, pool *pgxpool.Pool, epoch int64, t0 time.Time) (time.Duration, bool, error) {
	var next *time.Time
	err := pool.QueryRow(ctx, `SELECT min(pg_xact_commit_timestamp(xmin)) FROM orders
 WHERE epoch > $1 AND pg_xact_commit_timestamp(xmin) > $2`, epoch, t0).Scan(&next)
	if err != nil || next == nil {
		return 0, false, err
	}
	return next.Sub(t0), true, nil
}

// ParseLine reads one line of a worker's output; ok is false for lines
// that are no write outcome.
func ParseLine(holder, line string) (o Outcome, ok bool) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return o, false
	}
	kind := Kind(f[0])
	switch kind {
	case Acked, Rejected, Unknown, Failed:
	default:
		return o, false
	}
	var epoch int64
	if _, err := fmt.Sscan(f[2], &epoch); err != nil {
		return o, false
	}
	return Outcome{Key: f[1], Holder: holder, Epoch: epoch, Kind: kind}, true
}

// Observation is one report of a worker's Manager.Observe: the lease's
// holder ("-" when it was never acquired), epoch, and whether it was held.
type Observation struct {
	Holder string
	Epoch  int64
	Held   bool
}

// ParseObservation reads an "obs HOLDER EPOCH HELD" line of a worker.
func ParseObservation(line string) (o Observation, ok bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "obs" {
		return o, false
	}
	if _, err := fmt.Sscan(f[2], &o.Epoch); err != nil {
		return o, false
	}
	if _, err := fmt.Sscan(f[3], &o.Held); err != nil {
		return o, false
	}
	o.Holder = f[1]
	return o, true
}

// ObserverViolations are what the observers reported against the lease's
// promises and the database's history.
type ObserverViolations struct {
	// Backwards are reports, by one observer, of an epoch lower than its
	// report before.
	Backwards []string
	// SharedEpochs are epochs that observers reported with two holders.
	SharedEpochs []int64
	// Ungranted are reported holders and epochs that the history never
	// granted.
	Ungranted []string
}

// Any reports whether anything was violated.
func (v ObserverViolations) Any() bool {
	return len(v.Backwards) > 0 || len(v.SharedEpochs) > 0 || len(v.Ungranted) > 0
}

func (v ObserverViolations) String() string {
	return fmt.Sprintf("observed epochs backwards %d %v, observed epochs with two holders %v, observed holders never granted %d %v",
		len(v.Backwards), first(v.Backwards), v.SharedEpochs, len(v.Ungranted), first(v.Ungranted))
}

// CheckObservers checks what each observer reported of the lease called
// name, in the order it reported it, by observer: no epoch lower than the
// one before, no epoch with two holders (across all observers), and every
// holder and epoch one that the lease history shows granted. A lease never
// acquired (epoch 0) is no grant.
func CheckObservers(ctx context.Context, pool *pgxpool.Pool, name string, streams map[string][]Observation) (ObserverViolations, error) {
	var v ObserverViolations
	granted, err := collect(ctx, pool, pgx.RowToStructByName[epochOf],
		`SELECT DISTINCT holder, epoch FROM lease_history WHERE name = $1`, name)
	if err != nil {
		return v, fmt.Errorf("granted epochs: %w", err)
	}
	v.check(granted, streams)
	return v, nil
}

func (v *ObserverViolations) check(granted []epochOf, streams map[string][]Observation) {
	was := make(map[epochOf]bool, len(granted))
	for _, g := range granted {
		was[g] = true
	}
	holders := map[int64]map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(streams)) {
		var last int64
		for _, o := range streams[id] {
			if o.Epoch < last {
				v.Backwards = append(v.Backwards, fmt.Sprintf("%s: %d after %d", id, o.Epoch, last))
			}
			last = max(last, o.Epoch)
			if o.Epoch == 0 {
				continue
			}
			if holders[o.Epoch] == nil {
				holders[o.Epoch] = map[string]bool{}
			}
			holders[o.Epoch][o.Holder] = true
			if !was[epochOf{Holder: o.Holder, Epoch: o.Epoch}] {
				v.Ungranted = append(v.Ungranted, fmt.Sprintf("%s: %s at %d", id, o.Holder, o.Epoch))
			}
		}
	}
	for e, hs := range holders {
		if len(hs) > 1 {
			v.SharedEpochs = append(v.SharedEpochs, e)
		}
	}
	slices.Sort(v.SharedEpochs)
}
