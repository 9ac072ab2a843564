// Package clockspread carries clock values and SQL calls between its
// functions in the ways the clock rule follows outside any lease package,
// and one it does not: only some of its functions name a clock read or an
// SQL call, the others get their facts from them.
package clockspread

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// started is set from the clock when the package is initialised.
var started = time.Now()

// Started returns when the package was initialised.
func Started() time.Time { return started } // want Started:"returns clock from time.Now"

// last is set from the clock by Touch.
var last time.Time

// Touch records the time.
func Touch() { last = time.Now() }

// Last returns the time Touch recorded.
func Last() time.Time { return last } // want Last:"returns clock from time.Now"

// Fields are followed in lease packages only: outside them a clock stored
// in a field by one function and returned by another gives no fact.

type stamp struct {
	at   time.Time
	seen int
}

// keyed stores a clock value in a field by name.
func keyed() *stamp { return &stamp{at: time.Now()} }

// At returns the stamp's time, stored where keyed built it: no fact.
func (s *stamp) At() time.Time { return s.at }

type pair struct {
	when time.Time
	n    int
}

// unkeyed stores a clock value in a field by position.
func unkeyed() pair { return pair{time.Now(), 1} }

// When returns the pair's time: no fact.
func (p pair) When() time.Time { return p.when }

type cell struct{ t time.Time }

// through stores a clock value through a pointer to a field.
func through(c *cell) {
	p := &c.t
	*p = time.Now()
}

// T returns the cell's time: no fact.
func (c *cell) T() time.Time { return c.t }

// now reads the clock.
func now() time.Time { return time.Now() }

// middle names no clock read itself.
func middle() time.Time { return now() }

// Outer returns a clock value through two of the package's functions.
func Outer() time.Time { return middle() } // want Outer:"returns clock from time.Now"

// exec runs SQL with its argument.
func exec(ctx context.Context, p *pgxpool.Pool, v any) error {
	_, err := p.Exec(ctx, `UPDATE worker_leases SET expires_at = $1`, v)
	return err
}

// Save passes its value to SQL through exec.
func Save(ctx context.Context, p *pgxpool.Pool, v any) error { // want Save:"executes SQL with params \\[2\\]"
	return exec(ctx, p, v)
}

// Seen counts, from a field that only ever holds counts: no fact.
func (s *stamp) Seen() int { return s.seen }

// Count returns a number: no fact.
func Count(p pair) int { return p.n }
