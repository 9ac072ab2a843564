package lease_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// probe reports, through a Reporter with the NoTests scope, every call of
// find twice at its opening parenthesis with no end, with the package's
// call of sql, also at its parenthesis, as related information.
func probe() *analysis.Analyzer {
	leaseAnalyzer := lease.New(config.Default(), []string{"probe"})
	return &analysis.Analyzer{
		Name:     "probe",
		Doc:      "report calls of find",
		Requires: []*analysis.Analyzer{leaseAnalyzer},
		Run: func(pass *analysis.Pass) (any, error) {
			res := pass.ResultOf[leaseAnalyzer].(*lease.Result)
			rep := res.Reporter(pass, "probe", lease.NoTests)
			var finds []*ast.CallExpr
			var sql *ast.CallExpr
			for _, f := range pass.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					switch fn := call.Fun.(type) {
					case *ast.Ident:
						switch fn.Name {
						case "find":
							finds = append(finds, call)
						case "sql":
							sql = call
						}
					case *ast.SelectorExpr:
						if fn.Sel.Name == "Exec" {
							finds = append(finds, call)
						}
					}
					return true
				})
			}
			for _, call := range finds {
				for range 2 {
					rep.Report(analysis.Diagnostic{Pos: call.Lparen, Message: "found",
						Related: []analysis.RelatedInformation{{Pos: sql.Lparen, Message: "the SQL call"}}})
				}
			}
			rep.Finish()
			return nil, nil
		},
	}
}

// TestReporter checks the reporting shell: a finding at a call's
// parenthesis covers the call as written (a chain's last call from its
// method's name), so does its related information, a finding reported
// twice is shown once, and a test file is out of a NoTests scope.
func TestReporter(t *testing.T) {
	results := analysistest.Run(t, testdir.Root(), probe(), "reporter")
	if len(results) == 0 {
		t.Fatal("no package analysed")
	}
	at := func(fset *token.FileSet, pos, end token.Pos) string {
		p, e := fset.Position(pos), fset.Position(end)
		return fmt.Sprintf("%d:%d-%d:%d", p.Line, p.Column, e.Line, e.Column)
	}
	want := []string{
		"18:6-18:16 related 21:2-21:7",  // find(1, 2), sql()
		"20:11-20:17 related 21:2-21:7", // Exec() of the chain
	}
	// The package and its test variant (with the test file) are analysed
	// each on its own; go test's generated main is not a lease package.
	variants := 0
	for _, r := range results {
		if r.Pass.Pkg.Path() != "reporter" {
			continue
		}
		variants++
		var got []string
		for _, d := range r.Diagnostics {
			line := at(r.Pass.Fset, d.Pos, d.End)
			for _, rel := range d.Related {
				line += " related " + at(r.Pass.Fset, rel.Pos, rel.End)
			}
			got = append(got, line)
		}
		slices.Sort(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: diagnostics:\n got %q\nwant %q", r.Pass.Pkg.Path(), got, want)
		}
	}
	if variants != 2 {
		t.Errorf("%d variants of reporter analysed, want 2 (the package and its test variant)", variants)
	}
}
