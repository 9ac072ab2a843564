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
	// part is the bits of l that the value carries only in part: clock
	// bits that the fields of a struct it is, holds or points to were
	// stored from (the struct itself is no time), and parameters that it
	// is a field of. A function of a lease package that reads a field
	// sees what the package stored in it (see checker.fields), so a
	// struct passed to it, or a field read from one, needs no more.
	part  labels
	psrcs sources // the sources of srcs that only the fields hold
}

// finding is a report waiting for the fixpoint to end: a clock read, what
// it does, and the SQL call it does it to.
type finding struct {
	src  source
	what string
	at   token.Pos
}

// grew reports whether next, a union with cur, has more than cur: more
// bits or sources, or some that it now carries whole.
func grew(cur, next labelled) bool {
	return next.l != cur.l || len(next.srcs) != len(cur.srcs) ||
		next.part != cur.part || len(next.psrcs) != len(cur.psrcs)
}

func union(a, b labelled) labelled {
	out := labelled{l: a.l | b.l, srcs: a.srcs.union(b.srcs)}
	// A bit or a source is carried in part only if neither carries it
	// whole.
	out.part = (a.part | b.part) &^ (a.l &^ a.part) &^ (b.l &^ b.part)
	if psrcs := a.psrcs.union(b.psrcs); len(psrcs) > 0 {
		whole := func(x labelled, s source) bool { return x.srcs.has(s) && !x.psrcs.has(s) }
		if slices.ContainsFunc(psrcs, func(s source) bool { return whole(a, s) || whole(b, s) }) {
			psrcs = slices.DeleteFunc(slices.Clone(psrcs), func(s source) bool { return whole(a, s) || whole(b, s) })
		}
		if len(psrcs) > 0 {
			out.psrcs = psrcs
		}
	}
	return out
}

// has reports whether s is one of the sources.
func (a sources) has(s source) bool {
	_, found := slices.BinarySearchFunc(a, s, compareSources)
	return found
}

// inFields returns l as what the fields of a struct were stored from:
// its clock is in the struct, not the struct itself.
func inFields(l labelled) labelled {
	if l.l&clockBits == 0 {
		return l
	}
	l.part |= l.l & clockBits
	l.psrcs = l.srcs
	return l
}

// bare returns l without the clock that it carries only in its fields.
func (l labelled) bare() labelled {
	clock := l.part & clockBits
	if clock == 0 && len(l.psrcs) == 0 {
		return l
	}
	out := labelled{l: l.l &^ clock, part: l.part &^ clock}
	for _, s := range l.srcs {
		if !l.psrcs.has(s) {
			out.srcs = append(out.srcs, s)
		}
	}
	return out
}

// clockless returns l without its clock: the parameters it derives from.
func (l labelled) clockless() labelled {
	return labelled{l: l.l &^ clockBits, part: l.part &^ clockBits}
}

// wholeParams returns the parameters that l carries as themselves, not
// only as a part of them.
func (l labelled) wholeParams() uint64 { return uint64(l.l &^ l.part & paramBits) }

// field returns what a field of a value labelled l derives from, as far
// as l tells: l's own clock, and its parameters as a part of them.
func (l labelled) field() labelled {
	l = l.bare()
	l.part |= l.l & paramBits
	return l
}

// reads returns the clock reads that l derives from, without the
// functions that read the clock passed as values.
func (l labelled) reads() sources {
	if !slices.ContainsFunc(l.srcs, func(s source) bool { return s.fn }) {
		return l.srcs
	}
	return slices.DeleteFunc(slices.Clone(l.srcs), func(s source) bool { return s.fn })
}
