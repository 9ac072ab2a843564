// Command failover shows the lease package's fence at work: a holder pauses
// past its TTL, another takes the lease over, and the first holder's late
// write to a table of its own (examples/orders) is refused by the
// database.
//
// It uses the server that LEASE_DATABASE_URL names, or starts a throwaway
// cluster from the system's PostgreSQL binaries.
//
//	go run ./examples/failover
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/leasepkg"
)

const ttl = 2 * time.Second

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

	manager := func(holder string) (*leasepkg.Manager, error) {
		cfg := leasepkg.DefaultConfig(fmt.Sprintf("demo-%d", os.Getpid())) // fresh on a shared server too
		cfg.Holder, cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = holder, ttl, ttl/4, ttl/4
		return leasepkg.New(pool, cfg)
	}
	a, err := manager("worker-a")
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Migrate(ctx); err != nil {
		return err
	}
	if err := orders.Migrate(ctx, pool); err != nil {
		return err
	}
	cfgB := a.Config()
	cfgB.Holder = "worker-b"
	b, err := leasepkg.New(pool, cfgB)
	if err != nil {
		return err
	}
	defer b.Close()

	la, err := a.Acquire(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("worker-a acquired %v\n", la)
	report("worker-a writes", orders.AppendOrder(ctx, a, la, order(la, 1)))

	if _, err := b.Acquire(ctx); err != nil {
		fmt.Printf("worker-b tries to acquire: %v\n", err)
	}

	fmt.Printf("worker-a pauses for %v without renewing (a GC pause, a frozen VM)\n", ttl+500*time.Millisecond)
	time.Sleep(ttl + 500*time.Millisecond)

	lb, err := b.Acquire(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("worker-b took over: %v\n", lb)
	report("worker-b writes", orders.AppendOrder(ctx, b, lb, order(lb, 1)))

	report("worker-a wakes and writes under its old epoch", orders.AppendOrder(ctx, a, la, order(la, 2)))
	_, err = a.Renew(ctx, la)
	report("worker-a tries to renew", err)

	rows, err := pool.Query(ctx, `SELECT order_key, epoch, holder FROM orders WHERE lease_name = $1 ORDER BY id`, la.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Println("orders in the database:")
	for rows.Next() {
		var key, holder string
		var epoch int64
		if err := rows.Scan(&key, &epoch, &holder); err != nil {
			return err
		}
		fmt.Printf("  %-24s epoch %d  %s\n", key, epoch, holder)
	}
	return rows.Err()
}

func order(l leasepkg.Lease, n int) orders.Order {
	return orders.Order{Key: fmt.Sprintf("%s/%s/%d", l.Name, l.Holder, n), Payload: "item"}
}

func report(what string, err error) {
	if err != nil {
		fmt.Printf("%s: refused: %v\n", what, err)
		return
	}
	fmt.Printf("%s: ok\n", what)
}
