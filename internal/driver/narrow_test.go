package driver

import "testing"

func TestCommentStarts(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"//leaseguard:lease\npackage p", true},
		{"// LeaseGuard: lease\npackage p", true},
		{"package p\n\n/* leaseguard:allow clock -- why */", true},
		{"package p\n\n//\u00a0leaseguard:lease", true},
		{`package p; import _ "github.com/leaseguard/leaseguard/leasepkg"`, false},
		{"package p // a lease, see leaseguard's docs", false},
		{"package p", false},
		{"package p // leaseguard", true},
	} {
		if got := commentStarts([]byte(tc.src), "leaseguard"); got != tc.want {
			t.Errorf("commentStarts(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}
