// Package bad imports a package that does not type-check.
package bad

import "example.com/dc/bad/broken"

// B calls it.
func B() int { return broken.N() }
