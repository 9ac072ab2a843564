//leaseguard:lease

// Package builder sends its SQL through upper/db's query builder, with
// table names from its configuration: the statements that the chains make
// are checked as SQL text is, at the chain, and values are named by the Go
// expressions that give them. The lease table is named by setting as the
// field that holds its name (builder.Config.LeaseTable), so that another
// table whose rows name a holder and a time (the lock table) is not
// mistaken for it.
package builder

import (
	"context"
	"time"

	"github.com/upper/db/v4"
)

type Config struct {
	LeaseTable string
	LockTable  string
}

type Store struct {
	session db.Session
	config  Config
}

type leaseRecord struct {
	Holder  string    `db:"holder"`
	Expires time.Time `db:"expires_at"`
	Note    string    `db:"-"`
}

type lockRecord struct {
	Name    string    `db:"name"`
	Holder  string    `db:"holder"`
	Expires time.Time `db:"expires_at"`
}

// The heartbeat: a renewal that sets expiry from the caller's time, never
// tests that the lease has not lapsed, and discards its result.
func (s *Store) Renew(ctx context.Context, holder string, now time.Time) error { // want Renew:"renews a lease"
	_, err := s.session.SQL().Update(s.config.LeaseTable). // want `UPDATE of the table named by s.config.LeaseTable sets expires_at from @now, a time the process chose` `renewal does not test expires_at > clock_timestamp\(\)`
								Set("expires_at", now).
								Where(db.Cond{"holder": holder}).
								Exec() // want `the result of this renewal is discarded`
	return err
}

// The first heartbeat inserts the holder's row from a record.
func (s *Store) Insert(ctx context.Context, rec *leaseRecord) error {
	_, err := s.session.Collection(s.config.LeaseTable).Insert(rec) // want `INSERT into the table named by s.config.LeaseTable sets expires_at from @Expires, a time the process chose`
	return err
}

// A renewal that tests the lease against the database clock, and checks
// its rows affected.
func (s *Store) RenewChecked(ctx context.Context, holder string) error { // want RenewChecked:"renews a lease"
	res, err := s.session.SQL().Update(s.config.LeaseTable).
		Set("expires_at", db.Raw("clock_timestamp() + interval '15 seconds'")).
		Where("holder = ? AND expires_at > clock_timestamp()", holder).
		Exec()
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLost
	}
	return nil
}

// ok: a chain that Amend rewrites sends a statement the chain does not
// spell, so it is not read (here the rewrite adds the lapse test).
func (s *Store) RenewAmended(ctx context.Context, holder string) error {
	res, err := s.session.SQL().Update(s.config.LeaseTable).
		Set("expires_at", db.Raw("clock_timestamp() + interval '15 seconds'")).
		Where(db.Cond{"holder": holder}).
		Amend(func(q string) string { return q + " AND expires_at > clock_timestamp()" }).
		Exec()
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLost
	}
	return nil
}

// ok: the lock table is not the lease table, though its rows name a holder
// and a time: the setting names the lease table's field.
func (s *Store) Lock(ctx context.Context, name, holder string, now time.Time) error {
	_, err := s.session.Collection(s.config.LockTable).Insert(&lockRecord{Name: name, Holder: holder, Expires: now})
	return err
}

// ok: a read.
func (s *Store) Live(ctx context.Context, since time.Time) ([]leaseRecord, error) {
	var out []leaseRecord
	err := s.session.SQL().Select("holder").From(s.config.LeaseTable).Where(db.Cond{"expires_at >": since}).All(&out)
	return out, err
}

type lostError struct{}

func (lostError) Error() string { return "lost" }

var errLost error = lostError{}
