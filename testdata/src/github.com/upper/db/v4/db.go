// Package db is a stub of upper/db's query builder, as much of its API as
// the fixtures use, each method declared by the interface that declares it
// in upper/db.
package db

import (
	"context"
	"database/sql"
)

type Cond map[interface{}]interface{}

type Session interface {
	Collection(name string) Collection
	SQL() SQL
}

type SQL interface {
	Select(columns ...interface{}) Selector
	SelectFrom(table ...interface{}) Selector
	InsertInto(table string) Inserter
	DeleteFrom(table string) Deleter
	Update(table string) Updater
	Exec(query interface{}, args ...interface{}) (sql.Result, error)
}

type SQLExecer interface {
	Exec() (sql.Result, error)
	ExecContext(context.Context) (sql.Result, error)
}

type SQLGetter interface {
	Query() (*sql.Rows, error)
	QueryRow() (*sql.Row, error)
}

type ResultMapper interface {
	All(destSlice interface{}) error
	One(dest interface{}) error
}

type Selector interface {
	Columns(columns ...interface{}) Selector
	From(tables ...interface{}) Selector
	Where(conds ...interface{}) Selector
	And(conds ...interface{}) Selector
	OrderBy(columns ...interface{}) Selector
	Join(table ...interface{}) Selector
	Limit(int) Selector
	ResultMapper
	SQLGetter
}

type Inserter interface {
	Columns(...string) Inserter
	Values(...interface{}) Inserter
	Returning(columns ...string) Inserter
	SQLExecer
}

type Deleter interface {
	Where(...interface{}) Deleter
	And(conds ...interface{}) Deleter
	SQLExecer
}

type Updater interface {
	Set(...interface{}) Updater
	Where(...interface{}) Updater
	And(conds ...interface{}) Updater
	Amend(func(queryIn string) (queryOut string)) Updater
	SQLExecer
}

type Collection interface {
	Find(...interface{}) Result
	Insert(interface{}) (InsertResult, error)
}

type Result interface {
	And(...interface{}) Result
	Update(interface{}) error
	Delete() error
	One(ptrToStruct interface{}) error
}

type InsertResult interface {
	ID() interface{}
}

type RawExpr struct{ value string }

func Raw(value string, args ...interface{}) *RawExpr { return &RawExpr{value: value} }
