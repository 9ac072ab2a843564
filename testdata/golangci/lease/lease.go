//leaseguard:lease

// Package lease is checked by the leaseguard linter of a custom golangci-lint.
package lease

import (
	"net/http" // a direct import: always reported

	"example.com/gcl/metrics" // reported only with imports.strict
)

var (
	_ = http.StatusOK
	_ = metrics.Handler
)
