//go:build e2e

package faults_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
)

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
			rep := runPromotion(t, primary, standby, bins, runSpec{name: "promotion, " + tc.name, policy: "term", paths: paths, workers: 8, duration: 20 * time.Second, writers: 2})
			t.Log(rep)
			if rep.tally.Committed == 0 || rep.afterPromotion == 0 {
				t.Fatalf("%d writes committed, %d after the promotion: the run tested nothing", rep.tally.Committed, rep.afterPromotion)
			}
			if tc.sync && (rep.violations.Any() || rep.observers.Any() || len(rep.twice) > 0) {
				t.Errorf("synchronous replication: %v; %v; epochs acquired by two holders %v", rep.violations, rep.observers, rep.twice)
			}
		})
	}
}

// promotionReport is what a promotion run did and found.
type promotionReport struct {
	*report
	afterPromotion int           // writes committed on the promoted standby
	firstCommit    time.Duration // from the promotion to the first commit on it
	killedAt       int64         // the epoch acquired just before the primary stopped
}

func (r *promotionReport) String() string {
	return fmt.Sprintf("%v\n   primary stopped right after the acquisition of epoch %d; after the promotion: %d writes committed, the first %v after it",
		r.report, r.killedAt, r.afterPromotion, r.firstCommit.Round(time.Millisecond))
}

func runPromotion(t *testing.T, primary, standby *pgcluster.Server, bins map[string]string, spec runSpec) *promotionReport {
	t.Helper()
	ctx := context.Background()
	r := &run{t: t, spec: spec, srv: primary, bin: bins[""], dbURL: primary.URL("postgres"),
		ttl: 2 * time.Second, renew: 500 * time.Millisecond, hold: 20 * time.Millisecond, led: map[path]int{}}
	pool, err := pgxpool.New(ctx, r.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	r.pool = pool
	r.reset(ctx)
	// The workers' readers send on it; made before they start.
	r.acquisitions = make(chan int64, 1)
	begin := time.Now()
	r.setPhase("all, mixed")
	for i := range spec.workers {
		r.start(spec.paths[i%len(spec.paths)])
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
	streams := map[string][]faults.Observation{}
	for _, w := range r.gone {
		if err := w.failed(); err != nil {
			t.Errorf("%s: %v", spec.name, err)
		}
		w.mu.Lock()
		outcomes = append(outcomes, w.outcomes...)
		streams[w.id] = w.observed
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
	if rep.observers, err = faults.CheckObservers(ctx, pool, leaseName, streams); err != nil {
		t.Fatalf("check observers: %v", err)
	}
	rep.breakdown(outcomes, r.pathOf)
	rep.elapsed = time.Since(begin)
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
