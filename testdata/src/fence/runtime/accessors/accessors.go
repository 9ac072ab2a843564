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
	db               *sql.DB
	Table, Name, Exp string
}

func (l *Lessor) tableName() string { return or(l.Table, "leases") }
func (l *Lessor) nameName() string  { return or(l.Name, "name") }
func (l *Lessor) expName() string   { return or(l.Exp, "exp") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Renew extends the lease to exp, if it is still held by the process's
// clock.
func (l *Lessor) Renew(ctx context.Context, name string, exp time.Time) error {
	q := fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE %s = $2 AND %s > $3`, l.tableName(), l.expName(), l.nameName(), l.expName())
	res, err := l.db.ExecContext(ctx, q, exp, name, time.Now()) // want `UPDATE of the table named by l.tableName\(\) sets the column named by l.expName\(\) from \$1, a time the process chose` `UPDATE of the table named by l.tableName\(\) tests the column named by l.expName\(\) against \$3, a time the process chose`
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

// ok: an insert of a row with no holder column the rule knows: no
// acquisition it judges.
func (l *Lessor) Acquire(ctx context.Context, name string, exp time.Time) error {
	_, err := l.db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s, %s) VALUES ($1, $2)`, l.tableName(), l.nameName(), l.expName()), name, exp)
	return err
}
