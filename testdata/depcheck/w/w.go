// Package w imports r, whose external test imports w: r is then imported
// from its export data, by w and by the test alike.
package w

import "example.com/dc/r"

// Z returns a type of r.
func Z() r.T { return r.T{} }
