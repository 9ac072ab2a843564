package p_test

import (
	"testing"

	"example.com/dc/p"
	"example.com/dc/q"
	"example.com/dc/r"
)

var _ r.T = q.R()

func TestX(t *testing.T) { _ = p.Use(q.F()) + p.H() + p.Use(p.FromTest()) }
