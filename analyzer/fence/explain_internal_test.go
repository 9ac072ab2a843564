package fence

import "testing"

func TestLeaseTable(t *testing.T) {
	for display, want := range map[string]string{
		"orders":                            "the lease table orders",
		`"Lease"`:                           `the lease table "Lease"`,
		"the table named by s.config.Table": "the lease table named by s.config.Table",
		"a table named at run time":         "a lease table named at run time",
	} {
		if got := leaseTable(display); got != want {
			t.Errorf("leaseTable(%q) = %q, want %q", display, got, want)
		}
	}
}
