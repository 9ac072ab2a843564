// Package v imports q, which imports p. Analysed with p in one graph, v
// imports q (and p) from export data, while p's external test imports q
// compiled again for p's test: each must see its own q.
package v

import (
	"example.com/dc/p"
	"example.com/dc/q"
)

// V reaches os.Getenv through q.F and p.G.
func V() string { return p.Use(q.F()) }
