package leasepkg

import (
	"strings"
	"testing"
)

// TestDurabilityRisk: what each combination of settings and standbys that
// pg_stat_replication shows is judged, including those the tests against
// a real standby do not set up (several standbys, quorum, a role that
// cannot read their state).
func TestDurabilityRisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		d    durability
		want string // "" for no risk
	}{
		{"a lone primary", durability{syncCommit: "on"}, ""},
		{"a lone primary, local", durability{syncCommit: "local"}, ""},
		{"a lone primary, off", durability{syncCommit: "off"}, "synchronous_commit is off"},
		{"an asynchronous standby", durability{syncCommit: "on", standbys: 1}, "1 standby streams asynchronously"},
		{"two asynchronous standbys", durability{syncCommit: "on", standbys: 2}, "2 standbys stream asynchronously"},
		{"one synchronous of two", durability{syncCommit: "on", syncNames: "FIRST 1 (a, b)", standbys: 2, sync: 1}, ""},
		{"quorum", durability{syncCommit: "remote_apply", syncNames: "ANY 1 (a, b)", standbys: 2, sync: 2}, ""},
		{"named, none synchronous", durability{syncCommit: "on", syncNames: "c", standbys: 2}, `2 standbys stream and none is synchronous (synchronous_standby_names is "c")`},
		{"named, state unreadable", durability{syncCommit: "on", syncNames: "a", standbys: 1, unreadable: 1}, ""},
		{"empty names, state unreadable", durability{syncCommit: "on", syncNames: "  ", standbys: 1, unreadable: 1}, "1 standby streams asynchronously"},
		{"synchronous, local", durability{syncCommit: "local", syncNames: "a", standbys: 1, sync: 1}, "synchronous_commit is local"},
		{"synchronous, off", durability{syncCommit: "off", syncNames: "a", standbys: 1, sync: 1}, "synchronous_commit is off"},
		{"synchronous, remote_write", durability{syncCommit: "remote_write", syncNames: "a", standbys: 1, sync: 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			what, fix := tc.d.risk()
			switch {
			case tc.want == "" && what != "":
				t.Fatalf("risk %q, want none", what)
			case tc.want != "" && !strings.Contains(what, tc.want):
				t.Fatalf("risk %q, want it to say %q", what, tc.want)
			case what != "" && fix == "":
				t.Fatalf("risk %q without a fix", what)
			}
		})
	}
}
