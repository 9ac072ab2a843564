package pgcluster

// This file starts a streaming standby of a server and promotes it, for
// failover tests.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartStandby makes a streaming standby of a cluster that [Start] made,
// with pg_basebackup from the running server, and starts it on a port of
// its own with opts' settings added. It returns once the standby accepts
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
