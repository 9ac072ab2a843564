//go:build dctagged

package r

import "example.com/dc/s"

// Tagged is built only with the tag dctagged.
func Tagged() string { return s.Env() }
