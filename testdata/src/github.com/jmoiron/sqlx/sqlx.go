// Package sqlx stands in for github.com/jmoiron/sqlx, with the shapes the
// rules use: its handles wrap database/sql's and add methods that scan.
package sqlx

import (
	"context"
	"database/sql"
)

type DB struct{ *sql.DB }

type Tx struct{ *sql.Tx }

type Conn struct{ *sql.Conn }

type Rows struct{ *sql.Rows }

type Row struct{ err error }

func (r *Row) Scan(dest ...any) error { return r.err }

func (db *DB) Get(dest any, query string, args ...any) error { return nil }
func (db *DB) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (db *DB) Select(dest any, query string, args ...any) error { return nil }
func (db *DB) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (db *DB) Queryx(query string, args ...any) (*Rows, error) { return nil, nil }
func (db *DB) QueryxContext(ctx context.Context, query string, args ...any) (*Rows, error) {
	return nil, nil
}
func (db *DB) QueryRowx(query string, args ...any) *Row { return nil }
func (db *DB) QueryRowxContext(ctx context.Context, query string, args ...any) *Row {
	return nil
}
func (db *DB) MustExec(query string, args ...any) sql.Result { return nil }
func (db *DB) MustExecContext(ctx context.Context, query string, args ...any) sql.Result {
	return nil
}
func (db *DB) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	return nil, nil
}
func (db *DB) BeginTxx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) { return nil, nil }

func (tx *Tx) Get(dest any, query string, args ...any) error { return nil }
func (tx *Tx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (tx *Tx) Select(dest any, query string, args ...any) error { return nil }
func (tx *Tx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (tx *Tx) Queryx(query string, args ...any) (*Rows, error) { return nil, nil }
func (tx *Tx) QueryxContext(ctx context.Context, query string, args ...any) (*Rows, error) {
	return nil, nil
}
func (tx *Tx) QueryRowx(query string, args ...any) *Row { return nil }
func (tx *Tx) QueryRowxContext(ctx context.Context, query string, args ...any) *Row {
	return nil
}
func (tx *Tx) MustExec(query string, args ...any) sql.Result { return nil }
func (tx *Tx) MustExecContext(ctx context.Context, query string, args ...any) sql.Result {
	return nil
}
func (tx *Tx) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	return nil, nil
}

func (c *Conn) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (c *Conn) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return nil
}
func (c *Conn) QueryxContext(ctx context.Context, query string, args ...any) (*Rows, error) {
	return nil, nil
}
func (c *Conn) QueryRowxContext(ctx context.Context, query string, args ...any) *Row {
	return nil
}
