// Command leader shows the lease package as a leader-election library: two
// workers campaign for one lease, the leader writes to a table of its own
// in fenced transactions, an observer prints every change of leader, and
// the first leader resigns so that the second takes over at once.
//
// It uses the server that LEASE_DATABASE_URL names, or starts a throwaway
// cluster from the system's PostgreSQL binaries.
//
//	go run ./examples/leader
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/leasepkg"
)

func main() {
	log.SetFlags(0)
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) (err error) {
	dsn, stop, err := pgcluster.DSN(leasepkg.EnvDSN)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	name := fmt.Sprintf("leader-%d", os.Getpid()) // fresh on a shared server too
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS ledger (lease text, epoch bigint, holder text, n int)`); err != nil {
		return err
	}

	manager := func(holder string) (*leasepkg.Manager, error) {
		cfg := leasepkg.DefaultConfig(name)
		cfg.Holder, cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = holder, 2*time.Second, 400*time.Millisecond, 400*time.Millisecond
		return leasepkg.New(pool, cfg)
	}
	observer, err := manager("observer")
	if err != nil {
		return err
	}
	defer observer.Close()
	if err := observer.Migrate(ctx); err != nil {
		return err
	}

	// The observer prints each change of leader until the workers are done.
	octx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		_ = observer.Observe(octx, func(info leasepkg.LeaderInfo) {
			if info.Held {
				fmt.Printf("observer: %s leads at epoch %d\n", info.Lease.Holder, info.Lease.Epoch)
			} else {
				fmt.Println("observer: no leader")
			}
		})
	}()

	// Each worker campaigns, writes three rows as leader, and resigns.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, holder := range []string{"worker-a", "worker-b"} {
		m, err := manager(holder)
		if err != nil {
			return err
		}
		defer m.Close()
		wg.Go(func() {
			errs <- m.Campaign(ctx, func(ctx context.Context, term *leasepkg.Term) error {
				for n := 1; n <= 3; n++ {
					err := term.Tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
						l := term.Lease()
						_, err := tx.Exec(ctx, `INSERT INTO ledger VALUES ($1, $2, $3, $4)`, l.Name, l.Epoch, l.Holder, n)
						return err
					})
					if errors.Is(err, leasepkg.ErrStaleFence) {
						return err // someone else leads now
					}
					if err != nil {
						return err
					}
					fmt.Printf("%s: fenced write %d at epoch %d\n", holder, n, term.Lease().Epoch)
				}
				fmt.Printf("%s: resigns\n", holder)
				return nil // Campaign resigns when fn returns
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	// Let the observer see the last resignation, then stop it.
	info, err := observer.Leader(ctx)
	for err == nil && info.Held {
		time.Sleep(50 * time.Millisecond)
		info, err = observer.Leader(ctx)
	}
	time.Sleep(100 * time.Millisecond)
	stopObserving()
	<-observed
	if err != nil {
		return err
	}

	var rows, epochs int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT epoch) FROM ledger WHERE lease = $1`, name).Scan(&rows, &epochs); err != nil {
		return err
	}
	fmt.Printf("ledger: %d rows under %d epochs\n", rows, epochs)
	return nil
}
