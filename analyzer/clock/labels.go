package clock

// This file defines the dataflow's lattice: what a value derives from
// (parameters, clock reads) and where its clock reads were.

import (
	"cmp"
	"go/token"
	"slices"
)

// Labels are what a value derives from: bit i for parameter i of the
// function being analysed, and two bits for the clock.
type labels uint64

const (
	clockRead labels = 1 << 63 // the value derives from a clock read
	clockFunc labels = 1 << 62 // the value is a function that reads the clock
	clockBits        = clockRead | clockFunc
	paramBits        = ^clockBits
)

// source is where a clock value came from, for the report.
type source struct {
	pos  token.Pos // the clock read, or the call of the helper that made one
	desc string    // time.Now, or time.Now via clockutil.Now
	fn   bool      // a function that reads the clock, used as a value
}

func compareSources(a, b source) int {
	return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.desc, b.desc), compareBools(a.fn, b.fn))
}

func compareBools(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// sources are the clock reads a value derives from, sorted; a slice is
// shared between values and never changed in place.
type sources []source

// union returns the sources in a or b: a itself when b adds none, so
// that callers see growth in the length.
func (a sources) union(b sources) sources {
	switch {
	case len(b) == 0:
		return a
	case len(a) == 0:
		return b
	}
	if !slices.ContainsFunc(b, func(s source) bool {
		_, found := slices.BinarySearchFunc(a, s, compareSources)
		return !found
	}) {
		return a
	}
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, compareSources)
	return slices.Compact(out)
}

type labelled struct {
	l    labels
	srcs sources // where its clock bits came from
}

// finding is a report waiting for the fixpoint to end: a clock read, what
// it does, and the SQL call it does it to.
type finding struct {
	src  source
	what string
	at   token.Pos
}

// grew reports whether next, a union with cur, has more than cur.
func grew(cur, next labelled) bool {
	return next.l != cur.l || len(next.srcs) != len(cur.srcs)
}

func union(a, b labelled) labelled {
	return labelled{l: a.l | b.l, srcs: a.srcs.union(b.srcs)}
}

// reads returns the clock reads that l derives from, without the
// functions that read the clock passed as values.
func (l labelled) reads() sources {
	if !slices.ContainsFunc(l.srcs, func(s source) bool { return s.fn }) {
		return l.srcs
	}
	return slices.DeleteFunc(slices.Clone(l.srcs), func(s source) bool { return s.fn })
}
