// Package keepalive stands in for google.golang.org/grpc/keepalive: settings.
package keepalive

import "time"

// ClientParameters stands in for keepalive.ClientParameters.
type ClientParameters struct{ Time time.Duration }
