// Package pgtest gives tests a real PostgreSQL database.
//
// The first call to [DB] in a test binary either connects to the server that
// LEASE_DATABASE_URL names or starts a throwaway cluster with
// [pgcluster.Start] (from the system's PostgreSQL binaries, in a temporary
// directory, on a free loopback port). Every test then gets a fresh database
// of its own on that server. [Main] stops the cluster when the tests are done.
//
// The cluster runs the PostgreSQL major version that LEASE_PG_VERSION
// names (15 by default; [pgcluster.EnvVersion]). Every test that gets a
// database logs the server's version; with LEASE_PG_VERSION set, a server of
// another major version (LEASE_DATABASE_URL's, say) fails the test.
//
// Where no database can be had, tests are skipped with the reason, except
// when the CI environment variable is set: there they fail, since a skipped
// database test in CI would hide a missing install step.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/internal/pgcluster"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// EnvURL names the environment variable that points the tests at an existing
// server instead of a throwaway cluster. Its role needs CREATEDB.
const EnvURL = "LEASE_DATABASE_URL"

var (
	once      sync.Once
	shared    *pgcluster.Server
	sharedErr error
	version   string // the server's, as it reports it
	wrongErr  error  // the server is not of the major version asked for
	dbSeq     atomic.Int64
)

// Main runs the tests and stops the cluster that [DB] started, if any. Use it
// from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// Shared returns the test binary's server, starting it on first use, and
// logs its version. Tests that need a database call [DB] instead; Shared is
// for tests that act on the server itself (a restart, which fails for the
// server that LEASE_DATABASE_URL names).
func Shared(tb testing.TB) *pgcluster.Server {
	tb.Helper()
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared, sharedErr = pgcluster.External(u)
			if sharedErr != nil {
				sharedErr = fmt.Errorf("%s: %w", EnvURL, sharedErr)
				return
			}
		} else {
			shared, sharedErr = pgcluster.Start(pgcluster.Options{})
			if errors.Is(sharedErr, pgcluster.ErrNoBinaries) {
				sharedErr = fmt.Errorf("%w, or set %s", sharedErr, EnvURL)
			}
			if sharedErr != nil {
				return
			}
		}
		version, wrongErr = shared.CheckVersion(context.Background())
	})
	if sharedErr != nil {
		testdir.Unavailable(tb, "pgtest: no PostgreSQL: %v", sharedErr)
	}
	if wrongErr != nil {
		tb.Fatalf("pgtest: %v", wrongErr)
	}
	tb.Logf("pgtest: PostgreSQL %s", version)
	return shared
}

// DB creates a fresh, empty database for the test and returns its URL. The
// database is dropped when the test ends.
func DB(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx := context.Background()
	if err := s.CreateDatabase(ctx, name); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.DropDatabase(ctx, name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return s.URL(name)
}

// Pool connects to a fresh database (see [DB]) and closes the pool when the
// test ends.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), DB(tb))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}
