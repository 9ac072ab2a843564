// want package:"reaches net/http.* via imports/tests"
//leaseguard:lease

// Package tests is clean; its test files are not.
package tests

import "example.com/metrics" // ok: net/http for a handler only

var _ = metrics.Handler

// Add adds.
func Add(a, b int) int { return a + b }
