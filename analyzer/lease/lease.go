// Package lease decides which packages leaseguard checks, and reads the
// //leaseguard: directives in them.
//
// A package is a lease package when any of its files carries the directive
//
//	//leaseguard:lease
//
// on a line of its own before the package clause (where //go:build goes),
// or when its import path matches a -lease.packages pattern. The external
// test package (p_test) of a lease package is one too. Nothing else is
// checked: a package named release is not a lease package.
//
// Every rule requires the analyzer that New returns and reads its [Result]:
// whether the package is a lease package, and its suppressions. A rule
// reports through the Result's [Reporter], the reporting shell that
// decides whether and where a finding is shown.
package lease

import (
	"go/ast"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Name is the analyzer's name, and the category of its diagnostics.
const Name = "lease"

// directivePrefix begins every directive.
const directivePrefix = "//leaseguard:"

// IsLease marks a lease package, so that its external test package is one
// too. A package that is not one has no such fact.
type IsLease struct{}

// AFact marks IsLease as a fact.
func (*IsLease) AFact() {}

func (*IsLease) String() string { return "lease package" }

// Result is what the lease analyzer found in a package.
type Result struct {
	// Lease reports whether the rules apply to the package.
	Lease bool
	// allows are the package's well-formed //leaseguard:allow directives.
	allows []*allow
}

// New returns the lease analyzer: it selects lease packages by directive
// and by cfg.Lease.Packages, and reports misplaced or malformed directives.
// rules are the names of the rules that //leaseguard:allow may name.
func New(cfg *config.Config, rules []string) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name: Name,
		Doc: `find lease packages and check leaseguard directives

A package is a lease package when one of its files carries //leaseguard:lease
on a line of its own before the package clause, or when its import path
matches a -lease.packages pattern. This analyzer reports, in any package, a
lease directive after the package clause and near misses of the directive
(// leaseguard:lease, /*leaseguard:lease*/, //leaseguard:leas,
//lease-guard:lease, text after it), which would leave a package unchecked
in silence; and, in a lease
package, //leaseguard:allow directives that are malformed, name an unknown
rule or give no reason, and -fence.table or -fence.tables Go names (of a
field or variable that holds a table's name) that do not exist.`,
		URL:        "https://github.com/leaseguard/leaseguard/blob/main/README.md#lease-packages-and-directives",
		FactTypes:  []analysis.Fact{new(IsLease)},
		ResultType: reflect.TypeFor[*Result](),
	}
	cfg.Flags(Name, &a.Flags)
	known := make(map[string]bool, len(rules))
	for _, r := range rules {
		known[r] = true
	}
	// Flags are parsed, and checked, before the first run, so the
	// settings are final and valid then.
	packages := sync.OnceValue(func() *config.Matcher { return config.NewMatcher(cfg.Lease.Packages) })
	a.Run = func(pass *analysis.Pass) (any, error) {
		res := run(pass, packages(), known)
		if res.Lease {
			checkGoNames(pass, &cfg.Fence)
		}
		return res, nil
	}
	return a
}

func run(pass *analysis.Pass, packages *config.Matcher, rules map[string]bool) *Result {
	res := &Result{Lease: isLease(pass, packages)}
	for _, f := range pass.Files {
		checkDirectives(pass, f, res, rules)
	}
	if res.Lease {
		pass.ExportPackageFact(new(IsLease))
	}
	return res
}

// checkGoNames reports, at the package clause of a lease package, each
// Go field or variable named by -fence.table or -fence.tables that the
// package's types show not to exist (see config.Fence.UnresolvedGoNames):
// it would make the fence rule check nothing, in silence. A finding, not
// an analysis error: go vet caches a unit whose analysis failed, and a
// second run would pass. The drivers that can stop the command on a bad
// setting (exit 2) tell these findings by config.IsSettingError. Once per
// package: not again in its external test package.
func checkGoNames(pass *analysis.Pass, f *config.Fence) {
	if strings.HasSuffix(pass.Pkg.Path(), "_test") {
		return
	}
	errs := f.UnresolvedGoNames(pass.Pkg)
	if len(errs) == 0 {
		return
	}
	pos := pass.Files[0].Name
	for _, file := range pass.Files {
		if !strings.HasSuffix(pass.Fset.File(file.Pos()).Name(), "_test.go") {
			pos = file.Name
			break
		}
	}
	for _, err := range errs {
		pass.Report(analysis.Diagnostic{Pos: pos.Pos(), End: pos.End(), Category: Name, Message: err.Error()})
	}
}

func isLease(pass *analysis.Pass, packages *config.Matcher) bool {
	path := pass.Pkg.Path()
	if testMain(pass) {
		// go test's synthesized main package (p.test) imports the package
		// under test; its findings would be the tested package's own, at a
		// file in the build cache. go vet never analyses it; a standalone
		// driver with a pattern that matches it (...) does.
		return false
	}
	if packages.Match(path) {
		return true
	}
	for _, f := range pass.Files {
		if hasLeaseDirective(f) {
			return true
		}
	}
	// An external test package is checked with the package it tests.
	if tested, ok := strings.CutSuffix(path, "_test"); ok {
		for _, imp := range pass.Pkg.Imports() {
			if imp.Path() == tested {
				return pass.ImportPackageFact(imp, new(IsLease))
			}
		}
	}
	return false
}

// testMain reports whether pass's package is go test's synthesized main
// package: main, at a path ending in .test, all of its files generated.
func testMain(pass *analysis.Pass) bool {
	if pass.Pkg.Name() != "main" || !strings.HasSuffix(pass.Pkg.Path(), ".test") {
		return false
	}
	for _, f := range pass.Files {
		if !ast.IsGenerated(f) {
			return false
		}
	}
	return true
}

// hasLeaseDirective reports whether f carries the lease directive before its
// package clause.
func hasLeaseDirective(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if d := parseDirective(c.Text); d.verb == "lease" && d.problem == "" {
				return true
			}
		}
	}
	return false
}

// checkDirectives reports, in any package, misplaced lease directives and
// near misses of the lease directive (go vet runs on every package, and a
// near miss would leave the package unchecked in silence); and, in a lease
// package, collects its allow directives and reports malformed ones.
func checkDirectives(pass *analysis.Pass, f *ast.File, res *Result, rules map[string]bool) {
	for _, g := range f.Comments {
		for _, c := range g.List {
			d := parseDirective(c.Text)
			report := func(msg string) {
				pass.Report(analysis.Diagnostic{Pos: c.Pos(), End: c.End(), Category: Name, Message: msg})
			}
			switch {
			case d.problem == "" && d.verb == "lease":
				if c.Pos() > f.Package {
					report("misplaced //leaseguard:lease: it must come before the package clause, or the package is not checked")
				}
			case d.problem == "" && d.verb == "allow":
				if res.Lease {
					if a := parseAllow(pass, c, d.args, rules); a != nil {
						res.allows = append(res.allows, a)
					}
				}
			case d.problem == "":
				// not a directive
			case d.verb == "lease" && !res.Lease:
				report(d.problem + ", or the package is not checked")
			case d.verb == "allow" && !res.Lease:
				// A suppression in a package that is not checked suppresses
				// nothing either way.
			default:
				report(d.problem)
			}
		}
	}
}
