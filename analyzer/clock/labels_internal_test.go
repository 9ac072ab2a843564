package clock

import (
	"go/token"
	"slices"
	"testing"
)

// TestUnionParts checks that a bit or a source is carried in part only
// while nothing carries it whole, and what bare and field keep.
func TestUnionParts(t *testing.T) {
	a := source{pos: token.Pos(1), desc: "time.Now"}
	b := source{pos: token.Pos(2), desc: "time.Now"}
	const p0 = labels(1) // parameter 0
	whole := func(srcs ...source) labelled { return labelled{l: clockRead, srcs: srcs} }
	param := labelled{l: p0}

	for _, tc := range []struct {
		name      string
		got       labelled
		wantL     labels
		wantPart  labels
		wantSrcs  sources
		wantPsrcs sources
	}{
		{
			name:     "whole with whole",
			got:      union(whole(a), whole(b)),
			wantL:    clockRead,
			wantSrcs: sources{a, b},
		},
		{
			name:      "in fields alone",
			got:       inFields(whole(a)),
			wantL:     clockRead,
			wantPart:  clockRead,
			wantSrcs:  sources{a},
			wantPsrcs: sources{a},
		},
		{
			name:      "in fields with in fields",
			got:       union(inFields(whole(a)), inFields(whole(b))),
			wantL:     clockRead,
			wantPart:  clockRead,
			wantSrcs:  sources{a, b},
			wantPsrcs: sources{a, b},
		},
		{
			name:      "in fields with another read whole: the bit is whole, the first read only in fields",
			got:       union(inFields(whole(a)), whole(b)),
			wantL:     clockRead,
			wantSrcs:  sources{a, b},
			wantPsrcs: sources{a},
		},
		{
			name:     "in fields with the same read whole: whole",
			got:      union(whole(a), inFields(whole(a))),
			wantL:    clockRead,
			wantSrcs: sources{a},
		},
		{
			name:     "bare drops what only the fields hold",
			got:      union(inFields(whole(a)), whole(b)).bare(),
			wantL:    clockRead,
			wantSrcs: sources{b},
		},
		{
			name:  "bare of a clock only in fields: nothing of the clock",
			got:   union(inFields(whole(a)), param).bare(),
			wantL: p0,
		},
		{
			name:     "a field of a parameter is a part of it",
			got:      union(param, whole(a)).field(),
			wantL:    clockRead | p0,
			wantPart: p0,
			wantSrcs: sources{a},
		},
		{
			name:  "a parameter whole and in part: whole",
			got:   union(param, param.field()),
			wantL: p0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.got
			if g.l != tc.wantL || g.part != tc.wantPart || !slices.Equal(g.srcs, tc.wantSrcs) || !slices.Equal(g.psrcs, tc.wantPsrcs) {
				t.Errorf("got l=%b part=%b srcs=%v psrcs=%v, want l=%b part=%b srcs=%v psrcs=%v",
					g.l, g.part, g.srcs, g.psrcs, tc.wantL, tc.wantPart, tc.wantSrcs, tc.wantPsrcs)
			}
		})
	}
}

// TestGrewParts checks that a value that comes to carry whole what it
// carried in part has grown, so that the fixpoint goes on.
func TestGrewParts(t *testing.T) {
	a := source{pos: token.Pos(1), desc: "time.Now"}
	cur := inFields(labelled{l: clockRead, srcs: sources{a}})
	next := union(cur, labelled{l: clockRead, srcs: sources{a}})
	if !grew(cur, next) {
		t.Errorf("grew(%+v, %+v) = false, want true", cur, next)
	}
	if grew(next, union(next, cur)) {
		t.Errorf("a part added to a whole grew it")
	}
}
