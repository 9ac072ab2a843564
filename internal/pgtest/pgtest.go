// Package pgtest gives tests a real PostgreSQL database.
//
// The first call to [DB] in a test binary either connects to the server that
// LEASE_DATABASE_URL names or starts a throwaway cluster from the system's
// PostgreSQL binaries (initdb and pg_ctl, found on PATH or under
// /usr/lib/postgresql/*/bin) in a temporary directory, on a free loopback
// port, as the postgres user when the caller is root. Every test then gets a
// fresh database of its own on that server. [Main] stops the cluster when the
// tests are done.
//
// Where no database can be had, tests are skipped with the reason, except
// when the CI environment variable is set: there they fail, since a skipped
// database test in CI would hide a missing install step.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the environment variable that points the tests at an existing
// server instead of a throwaway cluster. Its role needs CREATEDB.
const EnvURL = "LEASE_DATABASE_URL"

var (
	once      sync.Once
	shared    *Server
	sharedErr error
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

// Shared returns the test binary's server, starting it on first use. Tests
// that need a database call [DB] instead; Shared is for tests that act on the
// server itself (a restart).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared, sharedErr = external(u)
			return
		}
		shared, sharedErr = Start(Options{})
	})
	if sharedErr != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("pgtest: no PostgreSQL for this test, and CI is set: %v", sharedErr)
		}
		tb.Skipf("pgtest: no PostgreSQL: %v", sharedErr)
	}
	return shared
}

// DB creates a fresh, empty database for the test and returns its URL. The
// database is dropped when the test ends.
func DB(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx := context.Background()
	if err := s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		err := s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		if err != nil {
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

// Options tune a cluster started by [Start].
type Options struct {
	// Settings are extra postgresql.conf lines, "name = value".
	Settings []string
}

// Server is a PostgreSQL server that tests may use: either a cluster that
// [Start] made, or the one that LEASE_DATABASE_URL names.
type Server struct {
	base    *url.URL // connection URL; its path is replaced per database
	dataDir string   // empty for an external server
	bin     string
	cred    *syscall.Credential
	log     string
	stopped bool // Crash stopped it; Stop only removes its files
}

// URL returns the connection URL of database db on the server.
func (s *Server) URL(db string) string {
	u := *s.base
	u.Path = "/" + db
	return u.String()
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return s.base.Host }

func (s *Server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.URL(adminDB(s.base)))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", s.base.Redacted(), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

func adminDB(u *url.URL) string {
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		return db
	}
	return "postgres"
}

func external(raw string) (*Server, error) {
	if _, err := pgx.ParseConfig(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%s must be a postgres:// URL", EnvURL)
	}
	return &Server{base: u}, nil
}

// DSN returns the connection string that the environment variable env
// names, or else that of a throwaway cluster it starts, saying so on
// stdout; stop stops that cluster (a no-op for the environment's server).
// The examples use it to run anywhere.
func DSN(env string) (dsn string, stop func() error, err error) {
	if dsn := os.Getenv(env); dsn != "" {
		return dsn, func() error { return nil }, nil
	}
	srv, err := Start(Options{})
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("started a throwaway PostgreSQL on %s\n", srv.Addr())
	return srv.URL("postgres"), srv.Stop, nil
}

// Start initialises and starts a throwaway cluster. The caller stops it with
// [Server.Stop].
func Start(opts Options) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dataDir: filepath.Join(dir, "data"), bin: bin, cred: cred, log: filepath.Join(dir, "server.log")}
	if err := s.start(opts); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start(opts Options) error {
	dir := filepath.Dir(s.dataDir)
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	if out, err := s.run("initdb", "-D", s.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	conf := append([]string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(port),
		"unix_socket_directories = '" + dir + "'",
		"max_connections = 200",
		// Durability buys nothing in a throwaway cluster; these make commits cheap.
		"fsync = off",
		"full_page_writes = off",
		"synchronous_commit = off",
		// Commit timestamps let checkers order commits from the history alone.
		"track_commit_timestamp = on",
	}, opts.Settings...)
	if err := appendConf(s.dataDir, conf); err != nil {
		return err
	}
	if err := s.ctl("start"); err != nil {
		return err
	}
	s.base = &url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return nil
}

// appendConf adds lines to a data directory's postgresql.conf; later lines
// override earlier ones.
func appendConf(dataDir string, lines []string) error {
	f, err := os.OpenFile(filepath.Join(dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Restart restarts a cluster that [Start] made, as `pg_ctl restart -m fast`:
// every connection is cut.
func (s *Server) Restart() error {
	if s.dataDir == "" {
		return errors.New("pgtest: cannot restart a server that " + EnvURL + " names")
	}
	return s.ctl("restart", "-m", "fast")
}

// Stop stops a cluster that [Start] made and removes its files. It does
// nothing for an external server.
func (s *Server) Stop() error {
	if s.dataDir == "" {
		return nil
	}
	var err error
	if !s.stopped {
		err = s.ctl("stop", "-m", "immediate")
	}
	if rerr := os.RemoveAll(filepath.Dir(s.dataDir)); err == nil {
		err = rerr
	}
	return err
}

// Crash stops a cluster that [Start] made at once, as a power cut would
// (`pg_ctl stop -m immediate`), and keeps its files until [Server.Stop].
func (s *Server) Crash() error {
	if s.dataDir == "" {
		return errors.New("pgtest: cannot stop a server that " + EnvURL + " names")
	}
	if err := s.ctl("stop", "-m", "immediate"); err != nil {
		return err
	}
	s.stopped = true
	return nil
}

// StartStandby makes a streaming standby of a cluster that [Start] made,
// with pg_basebackup from the running server, and starts it on a port of
// its own with opts' settings added. It returns once the standby accepts
// connections and the primary reports it streaming. For synchronous
// replication, start the primary with synchronous_standby_names and
// synchronous_commit = on: until the standby streams, commits there wait.
func (s *Server) StartStandby(opts Options) (*Server, error) {
	if s.dataDir == "" {
		return nil, errors.New("pgtest: cannot make a standby of a server that " + EnvURL + " names")
	}
	dir, err := os.MkdirTemp("", "pgtest-standby-")
	if err != nil {
		return nil, err
	}
	sb := &Server{dataDir: filepath.Join(dir, "data"), bin: s.bin, cred: s.cred, log: filepath.Join(dir, "server.log")}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	conninfo := "host=" + host + " port=" + port + " user=postgres application_name=standby"
	if out, err := sb.run("pg_basebackup", "-D", sb.dataDir, "-d", conninfo, "-R", "-X", "stream", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	newPort, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	conf := append([]string{
		"port = " + strconv.Itoa(newPort),
		"unix_socket_directories = '" + dir + "'",
		"synchronous_standby_names = ''",
	}, opts.Settings...)
	if err := appendConf(sb.dataDir, conf); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := sb.ctl("start"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	u := *s.base
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(newPort))
	sb.base = &u
	if err := s.waitStreaming(); err != nil {
		_ = sb.Stop()
		return nil, err
	}
	return sb, nil
}

// waitStreaming waits up to a minute for a standby to stream from s.
func (s *Server) waitStreaming() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL(adminDB(s.base)))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`).Scan(&n); err != nil {
			return fmt.Errorf("pgtest: wait for the standby: %w", err)
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("pgtest: the standby did not stream within a minute")
		case <-tick.C:
		}
	}
}

// Promote promotes a standby that [Server.StartStandby] made to a primary
// and returns once it accepts writes (`pg_ctl promote -w`).
func (s *Server) Promote() error {
	return s.ctl("promote")
}

// ctl runs pg_ctl; -w makes it wait until the server accepts connections
// (or has stopped), so nobody has to poll for readiness.
func (s *Server) ctl(args ...string) error {
	args = append([]string{"-D", s.dataDir, "-l", s.log, "-w", "-t", "60"}, args...)
	if out, err := s.run("pg_ctl", args...); err != nil {
		log, _ := os.ReadFile(s.log)
		return fmt.Errorf("pg_ctl %s: %w\n%s\n%s", args[len(args)-1], err, out, log)
	}
	return nil
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = filepath.Dir(s.dataDir)
	// Credential runs the server as postgres under root (nil: as the caller).
	// pg_ctl's server must not die with the test's process group on ^C
	// before Main has had a chance to stop it; Setpgid keeps it apart.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return cmd.CombinedOutput()
}

// findBin returns the directory that holds initdb, pg_ctl and postgres.
func findBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dir := filepath.Dir(p)
		if _, err := exec.LookPath("initdb"); err == nil {
			// Follow links such as /usr/local/bin/pg_ctl -> /usr/lib/postgresql/15/bin/pg_ctl,
			// so that pg_ctl finds the postgres binary beside it.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				dir = filepath.Dir(real)
			}
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // newest major version first
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin; install postgresql or set " + EnvURL)
}

// credential returns the postgres user's credential when running as root,
// since initdb and postgres refuse to run as root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run the server: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
