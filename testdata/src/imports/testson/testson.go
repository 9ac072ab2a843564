// want package:"reaches net/http.* via imports/testson"
//leaseguard:lease

// Package testson is clean; its test files are not, and are checked with
// -imports.tests.
package testson

import "example.com/metrics" // ok: net/http for a handler only

var _ = metrics.Handler

// Add adds.
func Add(a, b int) int { return a + b }
