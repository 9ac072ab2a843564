// Package other is no lease package, and does not compile: a run that
// loaded it for analysis would fail.
package other

var n int = "not an int"
