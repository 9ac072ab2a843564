// Package s reads the environment: the fact starts here, two imports
// below p, and reaches p through export data.
package s

import "os"

// Env reads the environment.
func Env() string { return os.Getenv("S") }

// Pure does not.
func Pure() string { return "s" }
