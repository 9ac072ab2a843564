package pgcluster

// This file starts a streaming standby of a server and promotes it, for
// failover tests.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartStandby makes a streaming standby of a cluster that [Start] made,
// with pg_basebackup from the running server (or, where the server's
// binaries come without it, as the prebuilt ones do, a base backup through
// SQL: [Server.copyBackup]), and starts it on a port of its own with opts'
// settings added. It returns once the standby accepts
// connections and the primary reports it streaming. For synchronous
// replication, start the primary with synchronous_standby_names and
// synchronous_commit = on: until the standby streams, commits there wait.
func (s *Server) StartStandby(opts Options) (*Server, error) {
	if s.dataDir == "" {
		return nil, s.notStarted("make a standby of")
	}
	dir, err := os.MkdirTemp("", "pgcluster-standby-")
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
	newPort, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var conf []string
	if _, err := os.Stat(filepath.Join(s.bin, "pg_basebackup")); err == nil {
		if out, err := sb.run("pg_basebackup", "-D", sb.dataDir, "-d", conninfo, "-R", "-X", "stream", "--no-sync"); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pg_basebackup: %w\n%s", err, out)
		}
	} else {
		slot := "standby_" + strconv.Itoa(newPort)
		if err := s.copyBackup(sb.dataDir, slot); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("base backup: %w", err)
		}
		conf = append(conf, "primary_conninfo = '"+conninfo+"'", "primary_slot_name = '"+slot+"'")
	}
	conf = append(conf,
		"port = "+strconv.Itoa(newPort),
		"unix_socket_directories = '"+dir+"'",
		"synchronous_standby_names = ''",
	)
	conf = append(conf, opts.Settings...)
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
			return fmt.Errorf("pgcluster: wait for the standby: %w", err)
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("pgcluster: the standby did not stream within a minute")
		case <-tick.C:
		}
	}
}

// Promote promotes a standby that [Server.StartStandby] made to a primary
// and returns once it accepts writes (`pg_ctl promote -w`).
func (s *Server) Promote() error {
	return s.ctl("promote")
}

// copyBackup makes dst a base backup of the running cluster s for a
// standby that streams from replication slot slot, without pg_basebackup:
// the slot keeps the WAL from before the backup's start until the standby
// has streamed it; pg_backup_start, a copy of s's files but the WAL and the
// server's own run-time files, and pg_backup_stop, whose label goes to
// backup_label, make a consistent backup of files copied while they changed
// (the server writes full pages during a backup whatever full_page_writes
// says). dst ends up owned by the server's user, with standby.signal.
func (s *Server) copyBackup(dst, slot string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL(adminDB(s.base)))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_create_physical_replication_slot($1, true)", slot); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_backup_start('pgcluster standby', true)"); err != nil {
		return err
	}
	if err := copyData(s.dataDir, dst, s.cred); err != nil {
		return err
	}
	var label string
	if err := conn.QueryRow(ctx, "SELECT labelfile FROM pg_backup_stop(false)").Scan(&label); err != nil {
		return err
	}
	for name, text := range map[string]string{"backup_label": label, "standby.signal": ""} {
		if err := writeOwned(filepath.Join(dst, name), []byte(text), s.cred); err != nil {
			return err
		}
	}
	return nil
}

// copyData copies data directory src to dst for a base backup: directories
// and files, but not pg_wal's files (the standby streams its WAL), nor
// pg_replslot's slots (the standby has none), nor the running server's
// postmaster.pid and postmaster.opts; a file that goes away while it is
// copied is left out.
// What it makes, cred's user owns (nil: the caller).
func copyData(src, dst string, cred *syscall.Credential) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if filepath.Dir(rel) == "pg_replslot" {
				return fs.SkipDir // a slot's directory without its state stops the server
			}
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			return chown(target, cred)
		}
		switch dir := filepath.Dir(rel); {
		case rel == "postmaster.pid" || rel == "postmaster.opts":
			return nil
		case dir == "pg_wal" || strings.HasPrefix(dir, "pg_wal/"):
			return nil
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return writeOwned(target, data, cred)
	})
}

// writeOwned writes a file that only cred's user, who owns it, may read
// (nil: the caller).
func writeOwned(path string, data []byte, cred *syscall.Credential) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return chown(path, cred)
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(path, int(cred.Uid), int(cred.Gid))
}
