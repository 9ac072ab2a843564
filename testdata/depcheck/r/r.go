// Package r reaches os.Getenv only through s.
package r

import "example.com/dc/s"

// X reaches os.Getenv through s.Env.
func X() string { return s.Env() }

// Y does not.
func Y() string { return s.Pure() }

// T has a method that reaches it.
type T struct{}

// M reaches os.Getenv through X.
func (T) M() string { return X() }
