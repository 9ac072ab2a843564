//leaseguard:lease

// Package allowcut reaches the model SDK only through an allowed package.
package allowcut

import (
	"example.com/outer" // ok: example.com/explain is allowed, which cuts the chain
	"net/http/httptest" // ok: allowed by pattern net/http/...test
)

var (
	_ = outer.Report
	_ = httptest.NewRecorder
)
