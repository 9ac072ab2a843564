// Package p is the package under analysis.
package p

import (
	"os"

	"example.com/dc/r"
)

// T is passed between p, q and p's external test, which must all see one T.
type T struct{ v string }

// G reaches os.Getenv directly.
func G() T { return T{os.Getenv("P")} }

// H reaches it through r, and r through s.
func H() string { return r.X() + r.Y() }

// M reaches it through a method of an imported type.
func M() string { return r.T{}.M() }

// Use does not.
func Use(t T) string { return t.v }
