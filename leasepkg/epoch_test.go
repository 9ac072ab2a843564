package leasepkg_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestEpochsOnlyGrow: whatever an operator, a test helper or a migration
// does to the lease row, the next acquisition gets an epoch above every
// epoch granted before, so that no fencing token is handed out twice.
func TestEpochsOnlyGrow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, stmt := range []string{
		`DELETE FROM worker_leases`,
		`TRUNCATE worker_leases`,
		`TRUNCATE worker_leases, orders`,
		`BEGIN; SET LOCAL session_replication_role = replica; DELETE FROM worker_leases; COMMIT`,
		`UPDATE worker_leases SET epoch = 1`,
		`UPDATE worker_leases SET name = 'elsewhere'`,
		`UPDATE worker_leases SET holder = 'c', expires_at = clock_timestamp() + interval '1 minute'`,
	} {
		t.Run(stmt, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			a, b := d.manager("a", nil), d.manager("b", nil)
			d.acquire(a)
			d.expire()
			la := d.acquire(b) // epoch 2
			if err := b.Release(ctx, la); err != nil {
				t.Fatal(err)
			}
			_, stmtErr := d.pool.Exec(ctx, stmt)
			lc, err := a.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if lc.Epoch <= la.Epoch {
				t.Fatalf("after %q (error: %v), acquired epoch %d again, having granted %d", stmt, stmtErr, lc.Epoch, la.Epoch)
			}
		})
	}
}

// TestCheckSchemaEpochGuard: the triggers that keep lease rows from being
// deleted or moved back are part of the schema the fence needs.
func TestCheckSchemaEpochGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct{ name, drift string }{
		{"delete guard dropped", `DROP TRIGGER worker_leases_keep_rows ON worker_leases`},
		{"truncate guard dropped", `DROP TRIGGER worker_leases_no_truncate ON worker_leases`},
		{"update guard dropped", `DROP TRIGGER worker_leases_epoch_grows ON worker_leases`},
		{"delete guard disabled", `ALTER TABLE worker_leases DISABLE TRIGGER worker_leases_keep_rows`},
		{"truncate guard not fired under replication", `ALTER TABLE worker_leases ENABLE TRIGGER worker_leases_no_truncate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			m := d.manager("a", nil)
			if err := m.CheckSchema(ctx); err != nil {
				t.Fatalf("CheckSchema after Migrate: %v", err)
			}
			d.exec(tc.drift)
			if err := m.CheckSchema(ctx); !errors.Is(err, leasepkg.ErrSchema) || !strings.Contains(err.Error(), "epoch") {
				t.Fatalf("CheckSchema after %q: %v, want ErrSchema about the epoch", tc.drift, err)
			}
			cfg := m.Config()
			cfg.DSN = d.pool.Config().ConnString()
			if err := openErr(ctx, cfg); !errors.Is(err, leasepkg.ErrSchema) {
				t.Fatalf("Open after %q: %v, want ErrSchema", tc.drift, err)
			}
		})
	}
}

// previousSchema is the schema as the version before the epoch guard and
// the term column made it.
const previousSchema = `
CREATE TABLE worker_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    epoch      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    UNIQUE (name, epoch)
);
CREATE TABLE orders (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lease_name text        NOT NULL,
    epoch      bigint      NOT NULL,
    holder     text        NOT NULL,
    order_key  text        NOT NULL UNIQUE,
    payload    text        NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO worker_leases VALUES ('orders', 'old', 7, clock_timestamp() - interval '1 second');`

// TestMigrateUpgradesPreviousSchema: a database made by the previous
// version opens, Migrate brings it up to date, and its epochs go on.
func TestMigrateUpgradesPreviousSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, previousSchema); err != nil {
		t.Fatal(err)
	}
	cfg := leasepkg.DefaultConfig(leaseName)
	cfg.DSN = dsn
	m, err := leasepkg.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open of the previous version's schema: %v", err)
	}
	defer m.Close()
	if err := m.Migrate(ctx); err != nil {
		t.Fatalf("Migrate of the previous version's schema: %v", err)
	}
	if err := m.CheckSchema(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.Epoch != 8 {
		t.Fatalf("acquired epoch %d after the previous version's 7, want 8", l.Epoch)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM worker_leases`); err == nil {
		t.Fatal("the upgraded schema lets a lease row be deleted")
	}
}
