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

// dropEpochIndex drops UNIQUE (name, epoch), as a DBA might next to the
// primary key: the epoch is then no key column, and an update of it alone
// takes no lock that conflicts with a fence's FOR KEY SHARE.
func dropEpochIndex(d *db) {
	d.exec(`ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key`)
}

// TestTakeoverLockWithoutEpochIndex is the schema-drift negative control:
// with the epoch index gone, the takeover's own FOR UPDATE still makes it
// wait for the fenced write, so no order commits after the takeover of its
// epoch. (An epoch UPDATE without that lock let 1 stale order land.)
func TestTakeoverLockWithoutEpochIndex(t *testing.T) {
	t.Parallel()
	if got := raceTakeover(t, dropEpochIndex, nil, true); got != 0 {
		t.Fatalf("%d orders committed after the takeover of their epoch, want 0", got)
	}
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		drift string
		want  string // in the error
	}{
		{"epoch index dropped", `ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key`, "no unique index covering epoch"},
		{"epoch index partial", `ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key;
CREATE UNIQUE INDEX ON worker_leases (name, epoch) WHERE epoch > 0`, "no unique index covering epoch"},
		{"epoch index on an expression", `ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key;
CREATE UNIQUE INDEX ON worker_leases (name, (epoch + 0))`, "no unique index covering epoch"},
		{"epoch only an included column", `ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_name_epoch_key;
CREATE UNIQUE INDEX ON worker_leases (name) INCLUDE (epoch)`, "no unique index covering epoch"},
		{"epoch an integer", `DROP TRIGGER worker_leases_epoch_grows ON worker_leases; -- its WHEN reads the epoch
ALTER TABLE worker_leases ALTER COLUMN epoch TYPE integer`, "worker_leases.epoch is integer, want bigint"},
		{"expiry without a time zone", `ALTER TABLE worker_leases ALTER COLUMN expires_at TYPE timestamp`, "worker_leases.expires_at is timestamp without time zone"},
		{"holder nullable", `ALTER TABLE worker_leases ALTER COLUMN holder DROP NOT NULL`, "worker_leases.holder is nullable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn := pgtest.DB(t)
			cfg := leasepkg.DefaultConfig(leaseName)
			cfg.DSN = dsn
			// Before Migrate there is nothing to check, and Open succeeds.
			m, err := leasepkg.Open(ctx, cfg)
			if err != nil {
				t.Fatalf("Open of an empty database: %v", err)
			}
			defer m.Close()
			if err := m.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, tc.drift); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what string
				err  error
			}{
				{"Migrate", m.Migrate(ctx)},
				{"CheckSchema", m.CheckSchema(ctx)},
				{"Open", openErr(ctx, cfg)},
			} {
				if what, err := c.what, c.err; !errors.Is(err, leasepkg.ErrSchema) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s after drift: %v, want ErrSchema saying %q", what, err, tc.want)
				}
			}
		})
	}
}

func openErr(ctx context.Context, cfg leasepkg.Config) error {
	m, err := leasepkg.Open(ctx, cfg)
	if err == nil {
		m.Close()
	}
	return err
}

// TestSchemaExported: the DDL that Schema returns, run by hand as a
// migration tool would (twice: it is idempotent), makes a database that
// CheckSchema and Open accept and that a lease is acquired on, without
// Migrate.
func TestSchemaExported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for range 2 {
		if _, err := conn.Exec(ctx, leasepkg.Schema()); err != nil {
			t.Fatalf("the exported schema: %v", err)
		}
	}
	cfg := leasepkg.DefaultConfig(leaseName)
	cfg.DSN = dsn
	m, err := leasepkg.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open of a database made by the exported schema: %v", err)
	}
	defer m.Close()
	if err := m.CheckSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
}
