// Package broken does not type-check.
package broken

// N returns a string as an int.
func N() int { return "n" }
