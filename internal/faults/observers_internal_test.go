package faults

import (
	"slices"
	"testing"
)

// TestObserverChecks feeds the observers' checks histories that break each
// promise, and one that keeps them all: each check must be able to fail.
func TestObserverChecks(t *testing.T) {
	granted := []epochOf{{"w1", 1}, {"w2", 2}, {"w1", 3}}
	for _, tc := range []struct {
		name    string
		streams map[string][]Observation
		want    func(ObserverViolations) bool
	}{
		{"a faithful history", map[string][]Observation{
			"w1": {{"-", 0, false}, {"w1", 1, true}, {"w2", 2, true}, {"w2", 2, false}, {"w1", 3, true}},
			"w2": {{"w1", 1, true}, {"w1", 3, true}},
		}, func(v ObserverViolations) bool { return !v.Any() }},
		{"an epoch going backwards", map[string][]Observation{
			"w1": {{"w2", 2, true}, {"w1", 1, true}},
		}, func(v ObserverViolations) bool { return slices.Equal(v.Backwards, []string{"w1: 1 after 2"}) }},
		{"two holders at one epoch", map[string][]Observation{
			"w1": {{"w1", 3, true}},
			"w2": {{"w2", 3, true}},
		}, func(v ObserverViolations) bool { return slices.Equal(v.SharedEpochs, []int64{3}) }},
		{"a holder never granted", map[string][]Observation{
			"w1": {{"w3", 2, true}},
		}, func(v ObserverViolations) bool { return slices.Equal(v.Ungranted, []string{"w1: w3 at 2"}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v ObserverViolations
			v.check(granted, tc.streams)
			if !tc.want(v) {
				t.Errorf("got %v", v)
			}
		})
	}
}
