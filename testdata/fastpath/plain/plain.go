// Package plain has nothing to do with leases.
package plain

// Answer is plain.
const Answer = 42
