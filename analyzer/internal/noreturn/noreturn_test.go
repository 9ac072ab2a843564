package noreturn_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/internal/noreturn"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

func TestNoReturn(t *testing.T) {
	analysistest.Run(t, testdir.Root(), noreturn.Analyzer, "noreturn")
}
