//leaseguard:lease

// Package builder sends its SQL through upper/db's query builder: a clock
// value that becomes part of a built statement flows into SQL, unless the
// statement only stamps a row of a table whose times nothing judges.
package builder

import (
	"context"
	"time"

	"github.com/upper/db/v4"
)

type Store struct {
	session db.Session
}

type event struct {
	What string    `db:"what"`
	At   time.Time `db:"at"`
}

// The heartbeat: the process clock sets the liveness time.
func (s *Store) Beat(ctx context.Context, name string) error { // want Beat:"executes SQL with params \\[2\\]"
	_, err := s.session.SQL().Update("controllers").
		Set("seen_at", time.Now()). // want `time.Now flows into an argument of Set, which builds SQL`
		Where(db.Cond{"name": name}).
		Exec()
	return err
}

// The process clock decides which controllers count as live.
func (s *Store) Live(ctx context.Context, timeout time.Duration) ([]string, error) { // want Live:"executes SQL with params \\[2\\]"
	since := time.Now().Add(-timeout) // want `time.Now flows into an argument of And, which builds SQL`
	var names []string
	err := s.session.SQL().Select("name").From("controllers").And(db.Cond{"seen_at >": since}).All(&names)
	return names, err
}

// ok: an audit row's time, in a table that no statement judges by time.
func (s *Store) Audit(ctx context.Context, what string) error { // want Audit:"executes SQL with params \\[2\\]"
	_, err := s.session.Collection("events").Insert(&event{What: what, At: time.Now()})
	return err
}
