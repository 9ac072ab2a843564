//leaseguard:lease

// Package lease is checked by the leaseguard linter of a custom golangci-lint.
package lease

import (
	"net/http" // a direct import whose client the package uses: always reported

	"example.com/gcl/metrics" // reported only with imports.strict
)

var (
	_ = http.DefaultClient
	_ = metrics.Handler
)
