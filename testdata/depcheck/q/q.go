// Package q imports p.
package q

import (
	"example.com/dc/p"
	"example.com/dc/r"
)

// F reaches os.Getenv through p.G.
func F() p.T { return p.G() }

// R returns a type of r, which p's external test imports too: both must
// see one r.T.
func R() r.T { return r.T{} }
