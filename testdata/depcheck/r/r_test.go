package r_test

import (
	"testing"

	"example.com/dc/r"
	"example.com/dc/w"
)

var _ r.T = w.Z()

// r has no test of its own: its external test imports r itself.
func TestX(t *testing.T) { _ = r.X() + r.T{}.M() }
