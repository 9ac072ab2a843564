package leasepkg_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/internal/testdir"
	"github.com/leaseguard/leaseguard/leasepkg"
)

// TestAsyncStandbyRefused starts a primary and a real streaming standby of
// it (pg_basebackup, or a base backup through SQL where the binaries lack
// it): while the standby is asynchronous, Open refuses with ErrAsyncCommit
// unless AllowAsyncCommit is set; once synchronous_standby_names names it
// and it streams synchronously, Open accepts, unless the lease's sessions
// commit without waiting for it (synchronous_commit local or off).
func TestAsyncStandbyRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, err := pgcluster.Start(pgcluster.Options{})
	if err != nil {
		testdir.Unavailable(t, "no PostgreSQL cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := primary.Stop(); err != nil {
			t.Error(err)
		}
	})
	standby, err := primary.StartStandby(pgcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := standby.Stop(); err != nil {
			t.Error(err)
		}
	})
	dsn := primary.URL("postgres")
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)

	// A role without pg_read_all_stats sees that a standby streams, but
	// not whether it is synchronous.
	for _, sql := range []string{`CREATE ROLE lease_user LOGIN`, `CREATE DATABASE lease_db OWNER lease_user`} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(primary.URL("lease_db"))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("lease_user")
	userDSN := u.String()

	check := func(t *testing.T, dsn string, allow bool, want ...string) {
		t.Helper()
		cfg := leasepkg.DefaultConfig(leaseName)
		cfg.DSN = dsn
		cfg.AllowAsyncCommit = allow
		checkOpen(t, cfg, want...)
	}
	t.Run("an asynchronous standby is refused", func(t *testing.T) {
		check(t, dsn, false, "1 standby streams asynchronously", "synchronous_standby_names is empty", "AllowAsyncCommit")
	})
	t.Run("an asynchronous standby is refused to a role that cannot read its state", func(t *testing.T) {
		check(t, userDSN, false, "1 standby streams asynchronously", "synchronous_standby_names is empty")
	})
	t.Run("an asynchronous standby is allowed with AllowAsyncCommit", func(t *testing.T) {
		check(t, dsn, true)
	})

	// Make the standby synchronous, and wait until the primary says so.
	if _, err := admin.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = 'standby'`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	pollConn(t, admin, `SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'`)

	t.Run("a synchronous standby is allowed", func(t *testing.T) {
		check(t, dsn, false)
	})
	t.Run("a synchronous standby is allowed to a role that cannot read its state", func(t *testing.T) {
		check(t, userDSN, false)
	})
	t.Run("synchronous_commit local with a synchronous standby is refused", func(t *testing.T) {
		check(t, dsn+"&synchronous_commit=local", false, "synchronous_commit is local", "AllowAsyncCommit")
	})
	t.Run("synchronous_commit off with a synchronous standby is refused", func(t *testing.T) {
		check(t, dsn+"&synchronous_commit=off", false, "synchronous_commit is off", "AllowAsyncCommit")
	})
	t.Run("synchronous_commit remote_write with a synchronous standby is allowed", func(t *testing.T) {
		check(t, dsn+"&synchronous_commit=remote_write", false)
	})
}

// TestSynchronousCommitOffRefused: on a primary without standbys, Open
// refuses a session whose commits a crash can lose (synchronous_commit
// off), and accepts local, which waits for the local flush as on does.
func TestSynchronousCommitOffRefused(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DB(t)
	for _, tc := range []struct {
		name, setting string
		allow         bool
		want          []string // nothing: Open accepts
	}{
		{"the server's setting is allowed", "", false, nil},
		{"off is refused", "off", false, []string{"synchronous_commit is off", "a crash of the server loses", "AllowAsyncCommit"}},
		{"off is allowed with AllowAsyncCommit", "off", true, nil},
		{"local without a standby is allowed", "local", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := leasepkg.DefaultConfig(leaseName)
			cfg.DSN = dsn
			if tc.setting != "" {
				cfg.DSN += "&synchronous_commit=" + tc.setting
			}
			cfg.AllowAsyncCommit = tc.allow
			checkOpen(t, cfg, tc.want...)
		})
	}
}

// TestLogicalReplicationIsNoStandby: a walsender that streams a logical
// replication slot (change data capture; here pg_recvlogical) shows in
// pg_stat_replication as a standby does, but no failover promotes it:
// Open accepts the primary it streams from.
func TestLogicalReplicationIsNoStandby(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, err := pgcluster.Start(pgcluster.Options{Settings: []string{"wal_level = logical"}})
	if err != nil {
		testdir.Unavailable(t, "no PostgreSQL cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := primary.Stop(); err != nil {
			t.Error(err)
		}
	})
	recv, ok := primary.Bin("pg_recvlogical")
	if !ok {
		t.Skip("no pg_recvlogical beside the server's binaries (the prebuilt 17 and 18 hold only the server's)")
	}
	dsn := primary.URL("postgres")
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_create_logical_replication_slot('cdc', 'test_decoding')`); err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(primary.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(recv, "-h", host, "-p", port, "-U", "postgres", "-d", "postgres", "--slot", "cdc", "--start", "-f", os.DevNull)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pg_recvlogical: %s", stderr.String())
		}
	})
	pollConn(t, admin, `SELECT count(*) = 1 FROM pg_stat_replication`)
	cfg := leasepkg.DefaultConfig(leaseName)
	cfg.DSN = dsn
	checkOpen(t, cfg)
}

// checkOpen opens cfg: with want empty, Open must accept, and the lease be
// acquired; otherwise Open must refuse with ErrAsyncCommit, saying each of
// want, and CheckDurability of a Manager that New made on the same
// database (which AllowAsyncCommit does not silence) must say the same.
func checkOpen(t *testing.T, cfg leasepkg.Config, want ...string) {
	t.Helper()
	ctx := context.Background()
	m, err := leasepkg.Open(ctx, cfg)
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer m.Close()
		if err := m.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := m.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil {
		m.Close()
		t.Fatalf("Open accepted a database that can lose acknowledged commits, want ErrAsyncCommit saying %q", want)
	}
	if !errors.Is(err, leasepkg.ErrAsyncCommit) {
		t.Fatalf("Open: %v, want ErrAsyncCommit", err)
	}
	pool, perr := pgxpool.New(ctx, cfg.DSN)
	if perr != nil {
		t.Fatal(perr)
	}
	defer pool.Close()
	m, perr = leasepkg.New(pool, cfg)
	if perr != nil {
		t.Fatal(perr)
	}
	defer m.Close()
	cerr := m.CheckDurability(ctx)
	if !errors.Is(cerr, leasepkg.ErrAsyncCommit) {
		t.Fatalf("CheckDurability after New: %v, want ErrAsyncCommit", cerr)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Open: %v, want it to say %q", err, w)
		}
		if !strings.Contains(cerr.Error(), w) {
			t.Errorf("CheckDurability: %v, want it to say %q", cerr, w)
		}
	}
}

// pollConn runs the boolean query sql on conn every few milliseconds until
// it is true, or fails the test after a minute.
func pollConn(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var ok bool
		if err := conn.QueryRow(ctx, sql).Scan(&ok); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", sql)
		case <-tick.C:
		}
	}
}
