// Package bare imports nothing, so that an error in the settings shows as
// its own and not as a failed dependency.
package bare

// One is one.
const One = 1
