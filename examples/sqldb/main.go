// Command sqldb shows the lease package's fence on database/sql: a worker
// whose data access goes through *sql.DB (pgx's stdlib driver) fences its
// transactions with Term.TxSQL while it leads, and the same write under
// its lease after another holder took over is refused by the database.
//
// It uses the server that LEASE_DATABASE_URL names, or starts a throwaway
// cluster from the system's PostgreSQL binaries.
//
//	go run ./examples/sqldb
package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/leasepkg"
)

func main() {
	log.SetFlags(0)
	if err := start(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func start(ctx context.Context) (err error) {
	dsn, stop, err := pgcluster.DSN(leasepkg.EnvDSN)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	return run(ctx, dsn, os.Stdout)
}

// run leads, moves money in fenced database/sql transactions, resigns, and
// shows a write under the old lease refused once another holder leads.
func run(ctx context.Context, dsn string, out io.Writer) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS accounts (id int PRIMARY KEY, balance bigint NOT NULL)`); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts VALUES (1, 100), (2, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return err
	}

	// The leases themselves live on the Manager's own pgx pool.
	open := func(holder string) (*leasepkg.Manager, error) {
		cfg := leasepkg.DefaultConfig(fmt.Sprintf("sqldb-%d", os.Getpid())) // fresh on a shared server too
		cfg.DSN, cfg.Holder = dsn, holder
		cfg.TTL, cfg.RenewInterval, cfg.LockTimeout = 2*time.Second, 400*time.Millisecond, 400*time.Millisecond
		return leasepkg.Open(ctx, cfg)
	}
	a, err := open("worker-a")
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Migrate(ctx); err != nil {
		return err
	}
	b, err := open("worker-b")
	if err != nil {
		return err
	}
	defer b.Close()

	transfer := func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance - 10 WHERE id = 1`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 10 WHERE id = 2`)
		return err
	}

	// 1. worker-a leads, and its transfers are fenced by its term.
	var old leasepkg.Lease
	err = a.Hold(ctx, func(ctx context.Context, term *leasepkg.Term) error {
		old = term.Lease()
		fmt.Fprintf(out, "worker-a leads at epoch %d\n", old.Epoch)
		for range 3 {
			if err := term.TxSQL(ctx, db, transfer); err != nil {
				return err
			}
		}
		fmt.Fprintln(out, "worker-a: 3 fenced transfers committed")
		return nil // Hold releases the lease
	})
	if err != nil {
		return err
	}

	// 2. worker-b takes over; worker-a's late transfer under its old lease
	// is refused by the fence, in the database, and changes nothing.
	lb, err := b.Acquire(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "worker-b leads at epoch %d\n", lb.Epoch)
	err = a.TxSQL(ctx, db, old, transfer)
	fmt.Fprintf(out, "worker-a transfers under epoch %d: %v\n", old.Epoch, err)
	if err := b.TxSQL(ctx, db, lb, transfer); err != nil {
		return err
	}
	fmt.Fprintln(out, "worker-b: 1 fenced transfer committed")

	var from, to int64
	if err := db.QueryRowContext(ctx, `SELECT (SELECT balance FROM accounts WHERE id = 1), (SELECT balance FROM accounts WHERE id = 2)`).Scan(&from, &to); err != nil {
		return err
	}
	fmt.Fprintf(out, "balances: %d and %d\n", from, to)
	return b.Release(ctx, lb)
}
