package leasepkg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// refuseAcquisitions makes every insert and update of a lease row fail with
// SQLSTATE code, counting the attempts in the sequence attempts (which a
// rollback does not undo), until the returned function lifts it.
func refuseAcquisitions(d *db, code string) (lift func()) {
	d.exec(`CREATE SEQUENCE attempts`)
	d.exec(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('attempts');
    RAISE EXCEPTION 'refused for the test' USING ERRCODE = '` + code + `';
END $$`)
	d.exec(`CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON worker_leases FOR EACH ROW EXECUTE FUNCTION refuse()`)
	return func() { d.exec(`DROP TRIGGER refuse ON worker_leases`) }
}

// TestCampaignRetriesTransientErrors: the server errors that a restart, a
// failover or a busy server produce end an attempt, not the campaign.
func TestCampaignRetriesTransientErrors(t *testing.T) {
	t.Parallel()
	for _, code := range []string{
		"53300", // too_many_connections
		"57P03", // cannot_connect_now: the database is starting up
		"25006", // read_only_sql_transaction: a failover in progress
		"57P01", // admin_shutdown
		"08006", // connection_failure
		"40001", // serialization_failure
		"40P01", // deadlock_detected
	} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d := newDB(t)
			lift := refuseAcquisitions(d, code)
			m := d.manager("a", short)
			done := make(chan error, 1)
			go func() {
				done <- m.Campaign(ctx, func(ctx context.Context, term *leasepkg.Term) error {
					return orders.AppendOrder(ctx, m, term.Lease(), order(1))
				})
			}()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for d.count(`SELECT last_value FROM attempts`) < 3 {
				select {
				case err := <-done:
					t.Fatalf("Campaign gave up on SQLSTATE %s after %d attempts: %v", code, d.count(`SELECT last_value FROM attempts`), err)
				case <-tick.C:
				}
			}
			lift()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Campaign once the error stopped: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Campaign did not acquire once the error stopped")
			}
			if n := d.orders(); n != 1 {
				t.Fatalf("%d orders, want 1", n)
			}
		})
	}

	// What waiting cannot fix ends the campaign at once, saying what it is.
	for _, tc := range []struct{ code, want string }{
		{"42501", "permissions"}, // insufficient_privilege
		{"42P01", "schema"},      // undefined_table
	} {
		t.Run(tc.code+" is not retried", func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			refuseAcquisitions(d, tc.code)
			err := d.manager("a", short).Campaign(context.Background(), func(context.Context, *leasepkg.Term) error {
				t.Error("fn ran without a lease")
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Campaign: %v, want an error that says %q", err, tc.want)
			}
			if n := d.count(`SELECT last_value FROM attempts`); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
			var unwrapped interface{ SQLState() string }
			if !errors.As(err, &unwrapped) || unwrapped.SQLState() != tc.code {
				t.Fatalf("Campaign: %v, want the server's error wrapped", err)
			}
		})
	}
}

// TestCampaignRetriesRefusedConnections: the server refuses the campaign's
// connections (SQLSTATE 53300, too many connections for its role, sent at
// connect time as a busy server sends it) until a limit is lifted.
func TestCampaignRetriesRefusedConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDB(t)
	var dbName string
	if err := d.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	role := dbName + "_campaigner"
	d.exec(`CREATE ROLE ` + role + ` LOGIN CONNECTION LIMIT 0`)
	t.Cleanup(func() {
		d.exec(`DROP OWNED BY ` + role)
		d.exec(`DROP ROLE ` + role)
	})
	d.exec(`GRANT SELECT, INSERT, UPDATE ON worker_leases, orders TO ` + role)
	cc := d.pool.Config().Copy()
	cc.ConnConfig.User = role
	pool, err := pgxpool.NewWithConfig(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	m := d.managerOn(pool, "a", short)
	done := make(chan error, 1)
	go func() {
		done <- m.Campaign(ctx, func(ctx context.Context, term *leasepkg.Term) error {
			return orders.AppendOrder(ctx, m, term.Lease(), order(1))
		})
	}()
	select {
	case err := <-done:
		t.Fatalf("Campaign gave up while the server refused its connections: %v", err)
	case <-time.After(10 * m.Config().RenewInterval):
	}
	d.exec(`ALTER ROLE ` + role + ` CONNECTION LIMIT -1`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Campaign once the server accepted its connections: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Campaign did not acquire once the server accepted its connections")
	}
}
