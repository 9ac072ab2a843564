// Package codes stands in for google.golang.org/grpc/codes: an enum.
package codes

// Code stands in for codes.Code.
type Code uint32

// The codes used here.
const (
	OK          Code = 0
	Unavailable Code = 14
)
