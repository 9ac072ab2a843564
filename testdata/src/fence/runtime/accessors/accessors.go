//leaseguard:lease

// Package accessors names its lease table and every column at run time,
// each through a method that returns the user's setting or a default (the
// shape of bobg/sqlutil's Lessor): the renewal, which extends the expiry
// of the named rows whose expiry has not passed, shows the lease table
// and its expiry, and messages name the methods.
package accessors

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

type Lessor struct {
	db                    *sql.DB
	Table, Name, Exp, Key string
}

func (l *Lessor) tableName() string { return or(l.Table, "leases") }
func (l *Lessor) nameName() string  { return or(l.Name, "name") }
func (l *Lessor) expName() string   { return or(l.Exp, "exp") }
func (l *Lessor) keyName() string   { return or(l.Key, "key") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Acquire takes the lease named name until exp, with a random key: the
// row that Renew extends, by name and key, is the one it inserts.
func (l *Lessor) Acquire(ctx context.Context, name, key string, exp time.Time) error {
	q := fmt.Sprintf(`INSERT INTO %s (%s, %s, %s) VALUES ($1, $2, $3)`, l.tableName(), l.nameName(), l.expName(), l.keyName())
	_, err := l.db.ExecContext(ctx, q, name, exp, key) // want `INSERT into the table named by l.tableName\(\) sets the column named by l.expName\(\) from \$2, a time the process chose`
	return err
}

// Renew extends the lease to exp, if it is still held by the process's
// clock.
func (l *Lessor) Renew(ctx context.Context, name, key string, exp time.Time) error { // want Renew:"renews a lease"
	q := fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE %s = $2 AND %s = $3 AND %s > $4`, l.tableName(), l.expName(), l.nameName(), l.keyName(), l.expName())
	res, err := l.db.ExecContext(ctx, q, exp, name, key, time.Now()) // want `UPDATE of the table named by l.tableName\(\) sets the column named by l.expName\(\) from \$1, a time the process chose` `UPDATE of the table named by l.tableName\(\) tests the column named by l.expName\(\) against \$4, a time the process chose`
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.New("could not renew")
	}
	return nil
}

// Reap deletes the leases that have lapsed by the process's clock.
func (l *Lessor) Reap(ctx context.Context) error {
	_, err := l.db.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s < $1`, l.tableName(), l.expName()), time.Now()) // want `DELETE from the table named by l.tableName\(\) tests the column named by l.expName\(\) against \$1, a time the process chose`
	return err
}

// ok: the database's clock judges the lapse.
func (l *Lessor) ReapByDatabase(ctx context.Context) error {
	_, err := l.db.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s < clock_timestamp()`, l.tableName(), l.expName()))
	return err
}

// ok: a release by name; no expiry compared.
func (l *Lessor) Release(ctx context.Context, name string) error {
	_, err := l.db.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s = $1`, l.tableName(), l.nameName()), name)
	return err
}

// ok: an insert of a row without the key by which Renew names its rows:
// a row no one holds yet, no acquisition the rule judges.
func (l *Lessor) Add(ctx context.Context, name string, exp time.Time) error {
	_, err := l.db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s, %s) VALUES ($1, $2)`, l.tableName(), l.nameName(), l.expName()), name, exp)
	return err
}
