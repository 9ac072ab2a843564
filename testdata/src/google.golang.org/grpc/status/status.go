// Package status stands in for google.golang.org/grpc/status: errors that
// carry a code.
package status

import "google.golang.org/grpc/codes"

type statusError struct {
	code codes.Code
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// Error stands in for status.Error.
func Error(c codes.Code, msg string) error { return &statusError{c, msg} }

// Code stands in for status.Code.
func Code(err error) codes.Code {
	if e, ok := err.(*statusError); ok {
		return e.code
	}
	return codes.OK
}
