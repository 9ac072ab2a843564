//go:build cgo

package pgsql

import (
	"errors"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
)

// Backend names the parser built in: "cgo", libpg_query compiled in as C.
const Backend = "cgo"

func scan(sql string) (*pg_query.ScanResult, error) {
	r, err := pg_query.Scan(sql)
	return r, cgoError(err)
}

func parse(sql string) (*pg_query.ParseResult, error) {
	r, err := pg_query.Parse(sql)
	return r, cgoError(err)
}

func cgoError(err error) error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &parseError{Message: pe.Message, Cursorpos: pe.Cursorpos}
	}
	return err
}
