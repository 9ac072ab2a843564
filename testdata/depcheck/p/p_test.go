package p

import "testing"

// FromTest reaches os.Getenv; it exists only in p's test variant, which
// the external test and q (compiled again for it) see.
func FromTest() T { return G() }

func TestG(t *testing.T) { _ = Use(FromTest()) }
