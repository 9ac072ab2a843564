// Command worker is one contender of the fault suite (internal/faults): it
// leads through one of leasepkg's paths (-lead: Hold, Campaign, or Campaign
// on a Manager of a many-leases Client), appends orders while it leads
// through one of its fenced writes (-write: Term.Tx, Term.Fence on a
// transaction of its own, or their database/sql forms TxSQL and FenceSQL),
// forever, watches the lease with Manager.Observe (-observe), and prints one
// line per event on standard output for the suite to read:
//
//	ready                  it handles SIGUSR1 (stop leading) and SIGTERM (stop) from now on
//	acq EPOCH              acquired the lease
//	lost EPOCH REASON      Hold or Campaign ended with the lease lost or not acquired
//	obs HOLDER EPOCH HELD  Observe reported the lease (HOLDER - when never acquired)
//	quiet                  (after SIGUSR1) it stopped leading and writing, and observes on
//	intx KEY EPOCH         (with -hold) a fenced write passed its fence; its transaction stays open
//	ack KEY EPOCH          the write committed
//	rej KEY EPOCH          the fence refused it (ErrStaleFence)
//	unk KEY EPOCH          its outcome is unknown (the commit was not confirmed)
//	err KEY EPOCH REASON   it failed before it was sent, or with another error
//
// The first words of the outcome lines (ack, rej, unk, err) are the
// [faults.Kind] constants that the suite's checker reads them by.
//
// Lines are written unbuffered, so that a SIGKILL loses none that were
// printed. Built with -tags leaseguard_weaken, -weaken removes part of the
// fence, for the suite's negative control.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/faults"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// weaken is set by weaken.go in builds with the leaseguard_weaken tag.
var weaken func(m *leasepkg.Manager, part string) error

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dsn     = flag.String("dsn", os.Getenv("LEASE_DATABASE_URL"), "database URL")
		name    = flag.String("name", "orders", "lease name")
		id      = flag.String("id", "", "holder id and order key prefix (required)")
		ttl     = flag.Duration("ttl", time.Second, "lease TTL")
		renew   = flag.Duration("renew", 300*time.Millisecond, "renew interval")
		lockTO  = flag.Duration("lock-timeout", leasepkg.DefaultLockTimeout, "how long a takeover waits for in-flight writes")
		policy  = flag.String("policy", "term", "epoch policy: term or renewal")
		lead    = flag.String("lead", "hold", "how it leads: hold (Manager.Hold), campaign (Manager.Campaign), client (Campaign on a Client's Manager; -policy term only)")
		mode    = flag.String("write", "tx", "how it writes: tx (Manager.Tx), fence (Manager.Fence on its own pgx transaction), txsql (Manager.TxSQL), fencesql (Manager.FenceSQL on its own database/sql transaction)")
		observe = flag.Bool("observe", false, "watch the lease with Manager.Observe and print what it reports")
		extra   = flag.Int("extra", 0, "with -lead client: campaign for this many further leases (NAME-1 ...) on the same Client, without writing")
		hold    = flag.Duration("hold", 0, "keep every other write's transaction open this long after the fence passed (0: commit every write at once)")
		pace    = flag.Duration("pace", 5*time.Millisecond, "pause between writes")
		nw      = flag.Int("writers", 1, "concurrent writers while holding, each in transactions of its own")
		part    = flag.String("weaken", "", "remove parts of the fence, comma separated: lock, epoch, idle (builds with -tags leaseguard_weaken only)")
	)
	flag.Parse()
	if *id == "" || *dsn == "" {
		return errors.New("-id and -dsn are required")
	}
	cfg := leasepkg.DefaultConfig(*name)
	cfg.Holder, cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = *id, *ttl, *renew, *lockTO
	switch *policy {
	case "term":
		cfg.Policy = leasepkg.PerTerm
	case "renewal":
		cfg.Policy = leasepkg.PerRenewal
	default:
		return fmt.Errorf("-policy %q: want term or renewal", *policy)
	}
	switch *mode {
	case "tx", "fence", "txsql", "fencesql":
	default:
		return fmt.Errorf("-write %q: want tx, fence, txsql or fencesql", *mode)
	}

	// ctx ends the process; leading ends early on SIGUSR1, which leaves
	// the observer running, so that the suite can ask every observer for
	// the final leader once no one contends.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	leadCtx, stopLeading := signal.NotifyContext(ctx, syscall.SIGUSR1)
	defer stopLeading()
	say("ready")
	pool, err := pgxpool.New(ctx, *dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()

	var m *leasepkg.Manager
	var c *leasepkg.Client
	switch *lead {
	case "hold", "campaign":
		m, err = leasepkg.New(pool, cfg)
	case "client":
		if c, err = leasepkg.NewClient(pool, cfg); err != nil {
			return err
		}
		defer c.Close()
		m, err = c.Manager(*name)
	default:
		return fmt.Errorf("-lead %q: want hold, campaign or client", *lead)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	if *part != "" {
		if weaken == nil {
			return errors.New("-weaken needs a build with -tags leaseguard_weaken")
		}
		for _, p := range strings.Split(*part, ",") {
			if err := weaken(m, p); err != nil {
				return err
			}
		}
	}

	observed := make(chan error, 1)
	if *observe {
		go func() {
			observed <- m.Observe(ctx, func(li leasepkg.LeaderInfo) {
				holder := li.Lease.Holder
				if holder == "" {
					holder = "-"
				}
				say("obs %s %d %t", holder, li.Lease.Epoch, li.Held)
			})
		}()
	}

	var others sync.WaitGroup
	for i := range *extra {
		if c == nil {
			return errors.New("-extra needs -lead client")
		}
		mx, err := c.Manager(fmt.Sprintf("%s-%d", *name, i+1))
		if err != nil {
			return err
		}
		others.Go(func() {
			for leadCtx.Err() == nil {
				err := mx.Campaign(leadCtx, func(ctx context.Context, _ *leasepkg.Term) error {
					<-ctx.Done()
					return nil
				})
				if err != nil && leadCtx.Err() == nil {
					pause(leadCtx, cfg.RenewInterval)
				}
			}
		})
	}

	w := &writer{m: m, pool: pool, db: db, id: *id, mode: *mode, hold: *hold}
	fn := func(ctx context.Context, t *leasepkg.Term) error {
		say("acq %d", t.Lease().Epoch)
		var wg sync.WaitGroup
		for range max(*nw, 1) {
			wg.Go(func() {
				for ctx.Err() == nil {
					w.write(ctx, t.Lease())
					pause(ctx, *pace)
				}
			})
		}
		wg.Wait()
		return nil
	}
	for leadCtx.Err() == nil {
		if *lead == "hold" {
			err = m.Hold(leadCtx, fn)
		} else {
			err = m.Campaign(leadCtx, fn)
		}
		if err != nil && leadCtx.Err() == nil {
			say("lost 0 %s", oneLine(err))
			pause(leadCtx, cfg.RenewInterval)
		}
	}
	others.Wait()
	if ctx.Err() == nil {
		say("quiet")
	}
	select {
	case err := <-observed:
		if ctx.Err() == nil {
			return fmt.Errorf("observe: %w", err)
		}
	case <-ctx.Done():
	}
	return nil
}

type writer struct {
	m    *leasepkg.Manager
	pool *pgxpool.Pool
	db   *sql.DB
	id   string
	mode string
	hold time.Duration
	seq  atomic.Int64
}

// write appends one order under l by the writer's path and prints its
// outcome. A write, once begun, does not heed ctx (a holder that lost its
// lease by its own clock still commits what it started): only the fence may
// stop it.
func (w *writer) write(ctx context.Context, l leasepkg.Lease) {
	seq := w.seq.Add(1)
	o := orders.Order{Key: fmt.Sprintf("%s-%d", w.id, seq), Payload: w.id}
	hold := w.hold * time.Duration(seq%2) // every other write
	ctx = context.WithoutCancel(ctx)
	var err error
	switch w.mode {
	case "tx":
		err = w.m.Tx(ctx, l, func(ctx context.Context, tx pgx.Tx) error {
			if err := orders.Insert(ctx, tx, l, o); err != nil {
				return err
			}
			held(o, l, hold)
			return nil
		})
	case "fence":
		err = w.fenceTx(ctx, l, o, hold)
	case "txsql":
		err = w.m.TxSQL(ctx, w.db, l, func(ctx context.Context, tx *sql.Tx) error {
			if err := insertSQL(ctx, tx, l, o); err != nil {
				return err
			}
			held(o, l, hold)
			return nil
		})
	case "fencesql":
		err = w.fenceSQLTx(ctx, l, o, hold)
	}
	switch {
	case err == nil:
		say("%s %s %d", faults.Acked, o.Key, l.Epoch)
	case errors.Is(err, leasepkg.ErrStaleFence):
		say("%s %s %d", faults.Rejected, o.Key, l.Epoch)
	case errors.Is(err, leasepkg.ErrOutcomeUnknown):
		say("%s %s %d", faults.Unknown, o.Key, l.Epoch)
	default:
		say("%s %s %d %s", faults.Failed, o.Key, l.Epoch, oneLine(err))
	}
}

// held keeps a write's transaction open for hold after its fence passed,
// holding the fence's row lock: the window in which the suite freezes the
// process.
func held(o orders.Order, l leasepkg.Lease, hold time.Duration) {
	if hold > 0 {
		say("intx %s %d", o.Key, l.Epoch)
		time.Sleep(hold)
	}
}

// fenceTx makes the fenced write in a pgx transaction of its own, fenced
// by Manager.Fence (orders.AppendOrderTx).
func (w *writer) fenceTx(ctx context.Context, l leasepkg.Lease, o orders.Order, hold time.Duration) error {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := orders.AppendOrderTx(ctx, w.m, tx, l, o); err != nil {
		return err
	}
	held(o, l, hold)
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%w: %w", leasepkg.ErrOutcomeUnknown, err)
	}
	return nil
}

// fenceSQLTx makes the fenced write in a database/sql transaction of its
// own, fenced by Manager.FenceSQL.
func (w *writer) fenceSQLTx(ctx context.Context, l leasepkg.Lease, o orders.Order, hold time.Duration) error {
	tx, err := w.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := w.m.FenceSQL(ctx, tx, l); err != nil {
		return err
	}
	if err := insertSQL(ctx, tx, l, o); err != nil {
		return err
	}
	held(o, l, hold)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", leasepkg.ErrOutcomeUnknown, err)
	}
	return nil
}

// insertSQL writes o under l in tx, which the caller has fenced by l.
func insertSQL(ctx context.Context, tx *sql.Tx, l leasepkg.Lease, o orders.Order) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO orders (lease_name, epoch, holder, order_key, payload) VALUES ($1, $2, $3, $4, $5)`,
		l.Name, l.Epoch, l.Holder, o.Key, o.Payload)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d orders written, want 1", n)
	}
	return nil
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
