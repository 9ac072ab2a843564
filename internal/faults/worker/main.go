// Command worker is one contender of the fault suite (internal/faults): it
// holds a lease with leasepkg.Hold and appends orders while it holds,
// forever, and prints one line per event on standard output for the suite
// to read:
//
//	acq EPOCH              acquired the lease
//	lost EPOCH REASON      Hold ended with the lease lost or not acquired
//	intx KEY EPOCH         (with -hold) a fenced write passed its fence; its transaction is open
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

	"github.com/jackc/pgx/v5/pgxpool"

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
		dsn    = flag.String("dsn", os.Getenv("LEASE_DATABASE_URL"), "database URL")
		name   = flag.String("name", "orders", "lease name")
		id     = flag.String("id", "", "holder id and order key prefix (required)")
		ttl    = flag.Duration("ttl", time.Second, "lease TTL")
		renew  = flag.Duration("renew", 300*time.Millisecond, "renew interval")
		lockTO = flag.Duration("lock-timeout", leasepkg.DefaultLockTimeout, "how long a takeover waits for in-flight writes")
		policy = flag.String("policy", "term", "epoch policy: term or renewal")
		hold   = flag.Duration("hold", 0, "write in a transaction held open this long after the fence passed (0: a fenced transaction that commits at once)")
		pace   = flag.Duration("pace", 5*time.Millisecond, "pause between writes")
		nw     = flag.Int("writers", 1, "concurrent writers while holding (each with -hold keeps its own transaction open)")
		part   = flag.String("weaken", "", "remove parts of the fence, comma separated: lock, epoch, idle (builds with -tags leaseguard_weaken only)")
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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	pool, err := pgxpool.New(ctx, *dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	m, err := leasepkg.New(pool, cfg)
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

	w := &writer{m: m, pool: pool, id: *id, hold: *hold}
	for ctx.Err() == nil {
		err := m.Hold(ctx, func(ctx context.Context, t *leasepkg.Term) error {
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
		})
		if err != nil && ctx.Err() == nil {
			say("lost 0 %s", oneLine(err))
			pause(ctx, cfg.RenewInterval)
		}
	}
	return nil
}

type writer struct {
	m    *leasepkg.Manager
	pool *pgxpool.Pool
	id   string
	hold time.Duration
	seq  atomic.Int64
}

// write appends one order under l and prints its outcome.
func (w *writer) write(ctx context.Context, l leasepkg.Lease) {
	o := orders.Order{Key: fmt.Sprintf("%s-%d", w.id, w.seq.Add(1)), Payload: w.id}
	var err error
	if w.hold > 0 {
		err = w.writeTx(ctx, l, o)
	} else {
		err = orders.AppendOrder(ctx, w.m, l, o)
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

// writeTx makes the fenced write in a transaction that stays open for
// w.hold after the fence passed, holding the fence's row lock: the window
// in which the suite freezes the process.
func (w *writer) writeTx(ctx context.Context, l leasepkg.Lease, o orders.Order) error {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := orders.AppendOrderTx(ctx, w.m, tx, l, o); err != nil {
		return err
	}
	say("intx %s %d", o.Key, l.Epoch)
	time.Sleep(w.hold) // not ctx: a frozen or cancelled holder still commits what it started
	if err := tx.Commit(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%w: %w", leasepkg.ErrOutcomeUnknown, err)
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
