package leasepkg

import (
	"context"
	"fmt"
	"strings"
)

// durabilitySQL reads what decides whether a commit that the server
// acknowledges to the lease's sessions can be lost: their
// synchronous_commit and synchronous_standby_names, and the standbys that
// stream from the server, counted three ways: all, synchronous (sync or
// quorum), and those whose state the role may not read (without
// pg_read_all_stats only their pid shows). A walsender that serves a
// logical replication slot (a subscriber, change data capture) is no
// standby that a failover promotes, and one that sends a base backup is
// none yet; neither counts.
const durabilitySQL = `SELECT current_setting('synchronous_commit'),
       current_setting('synchronous_standby_names'),
       count(r.pid),
       count(r.pid) FILTER (WHERE r.sync_state IN ('sync', 'quorum')),
       count(r.pid) FILTER (WHERE r.sync_state IS NULL)
  FROM pg_stat_replication r
 WHERE r.state IS DISTINCT FROM 'backup'
   AND NOT EXISTS (SELECT 1 FROM pg_replication_slots s
                    WHERE s.active_pid = r.pid AND s.slot_type = 'logical')`

// durability is what durabilitySQL read.
type durability struct {
	syncCommit, syncNames      string
	standbys, sync, unreadable int
}

// risk says how an acknowledged commit can be lost, and what fixes it;
// "" if it cannot be lost, as far as the server shows.
func (d durability) risk() (what, fix string) {
	const standbyFix = "name the standbys in synchronous_standby_names, keep synchronous_commit on, and have the failover manager promote only a synchronous standby"
	named := strings.TrimSpace(d.syncNames) != ""
	switch {
	case d.syncCommit == "off":
		return "synchronous_commit is off for the lease's sessions: a crash of the server loses the last commits it acknowledged",
			"set synchronous_commit to on for the lease's role or database (ALTER ROLE ... SET synchronous_commit = on)"
	case d.standbys > 0 && !named:
		return fmt.Sprintf("%d %s asynchronously (synchronous_standby_names is empty): a failover to %s can lose the last commits the primary acknowledged",
			d.standbys, plural(d.standbys, "standby streams", "standbys stream"), plural(d.standbys, "it", "one of them")), standbyFix
	case d.standbys > 0 && d.sync == 0 && d.unreadable == 0:
		return fmt.Sprintf("%d %s and none is synchronous (synchronous_standby_names is %q): a failover to %s can lose the last commits the primary acknowledged",
			d.standbys, plural(d.standbys, "standby streams", "standbys stream"), d.syncNames, plural(d.standbys, "it", "one of them")), standbyFix
	case d.syncCommit == "local" && named:
		return "synchronous_commit is local for the lease's sessions: their commits do not wait for the synchronous standby, and a failover to it can lose them",
			"set synchronous_commit to on for the lease's role or database"
	}
	return "", ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckDurability verifies that the database cannot lose a commit that it
// acknowledged to the lease's sessions, as far as the server shows: that
// synchronous_commit is not off for them, and, where standbys stream from
// the server, that one of them is synchronous and the sessions' commits
// wait for it (synchronous_commit on, remote_write or remote_apply, not
// local). A lost commit can be an acquisition: the next one would grant
// its epoch again, to another holder. Otherwise it returns an error
// wrapping ErrAsyncCommit that says what it found and how to fix it,
// whatever Config.AllowAsyncCommit says; [Open] calls it unless that is
// set. [New], which does no I/O, does not: call it after New.
//
// It reads the settings of one of the pool's sessions (the server's, the
// database's, the role's, and the connection string's) and the server's
// pg_stat_replication. Without pg_read_all_stats (or superuser) a role
// sees that standbys stream but not whether they are synchronous: then a
// non-empty synchronous_standby_names is taken at its word. It cannot see
// a standby that is not streaming at the moment, nor which standby a
// failover manager will promote: promote only a synchronous one. The
// context governs the query.
func (m *Manager) CheckDurability(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	var d durability
	err := m.pool.QueryRow(ctx, durabilitySQL).Scan(&d.syncCommit, &d.syncNames, &d.standbys, &d.sync, &d.unreadable)
	if err != nil {
		return fmt.Errorf("check durability: %w", err)
	}
	if what, fix := d.risk(); what != "" {
		return fmt.Errorf("%w: %s; %s, or set Config.AllowAsyncCommit to accept that an epoch can be granted twice", ErrAsyncCommit, what, fix)
	}
	return nil
}
