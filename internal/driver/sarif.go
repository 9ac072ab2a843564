package driver

import (
	"cmp"
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// wantsSARIF reports whether args ask for SARIF output (-format=sarif or
// -format sarif); any other -format is an error.
func wantsSARIF(args []string) (bool, error) {
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "format" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		if value != "sarif" {
			return false, fmt.Errorf("-format %q: the only format is sarif (see also -json)", value)
		}
		return true, nil
	}
	return false, nil
}

// runSARIF analyzes the packages that args name, standalone, and writes
// one SARIF 2.1.0 run to w, with a rule per analyzer and locations relative
// to the module root. Only the packages that can have a finding are
// loaded (see leaseRoots); cfg holds the analyzers' settings. Like -json, it exits 0 with findings, 1 on a tool
// error, 2 on a bad flag.
func runSARIF(args []string, cfg *config.Config, analyzers []*analysis.Analyzer, w, stderr io.Writer) int {
	fs := flag.NewFlagSet("leaseguard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = quietUsage(fs, args)
	fs.String("format", "", "output format: sarif")
	tests := fs.Bool("test", true, "analyze test files too")
	for _, a := range analyzers {
		a.Flags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, a.Name+"."+f.Name, f.Usage) })
	}
	// The other output flags, defined only to say that they do not go
	// with SARIF (rather than "flag provided but not defined").
	for _, name := range []string{"json", "fix", "diff"} {
		fs.Bool(name, false, "not with -format sarif")
	}
	fs.Int("c", -1, "not with -format sarif")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var other string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "json", "fix", "diff", "c":
			other = cmp.Or(other, f.Name)
		}
	})
	if other != "" {
		fmt.Fprintf(stderr, "leaseguard: -format sarif and -%s do not go together: SARIF is the whole output\n", other)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "leaseguard: -format sarif needs package patterns")
		return 2
	}

	patterns := fs.Args()
	run := sarif.NewRunWithInformationURI("leaseguard", "https://github.com/leaseguard/leaseguard")
	for _, a := range analyzers {
		title, _, _ := strings.Cut(a.Doc, "\n")
		run.AddRule(a.Name).WithShortDescription(sarif.NewMultiformatMessageString().WithText(title)).WithHelpURI(a.URL)
	}
	if roots, ok := leaseRoots(patterns, *tests, config.NewMatcher(cfg.Lease.Packages)); ok {
		if len(roots) == 0 {
			return writeSARIF(w, stderr, run)
		}
		patterns = roots
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Tests: *tests}, patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 1
	}
	if len(pkgs) == 0 {
		fmt.Fprintf(stderr, "leaseguard: %s matched no packages\n", strings.Join(fs.Args(), " "))
		return 1
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		return 1
	}
	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 1
	}

	root := moduleRoot(pkgs)
	type key struct{ posn, msg string }
	seen := make(map[key]bool)
	code := 0
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			fmt.Fprintf(stderr, "leaseguard: %s: %v\n", act, act.Err)
			code = 1
			continue
		}
		for _, d := range act.Diagnostics {
			posn := act.Package.Fset.Position(d.Pos)
			end := act.Package.Fset.Position(d.End)
			if !d.End.IsValid() {
				end = posn
			}
			// A package and its test variant report the same finding.
			if k := (key{posn.String(), d.Message}); seen[k] {
				continue
			} else {
				seen[k] = true
			}
			res := run.CreateResultForRule(ruleOf(act, d)).
				WithLevel("error").
				WithMessage(sarif.NewTextMessage(d.Message)).
				AddLocation(location(root, posn, end))
			// Related information ("in this SQL") as related locations,
			// numbered from 1 within the result.
			for i, r := range d.Related {
				rp := act.Package.Fset.Position(r.Pos)
				re := rp
				if r.End.IsValid() {
					re = act.Package.Fset.Position(r.End)
				}
				res.AddRelatedLocation(location(root, rp, re).WithID(i + 1).WithMessage(sarif.NewTextMessage(r.Message)))
			}
		}
	}
	// Results in file order, whatever order the packages finished in.
	slices.SortStableFunc(run.Results, func(a, b *sarif.Result) int {
		pa, pb := a.Locations[0].PhysicalLocation, b.Locations[0].PhysicalLocation
		if c := strings.Compare(*pa.ArtifactLocation.URI, *pb.ArtifactLocation.URI); c != 0 {
			return c
		}
		return *pa.Region.StartLine - *pb.Region.StartLine
	})
	if c := writeSARIF(w, stderr, run); c != 0 {
		return c
	}
	return code
}

// writeSARIF writes a report of run to w.
func writeSARIF(w, stderr io.Writer, run *sarif.Run) int {
	rep := report.NewV210Report()
	rep.AddRun(run)
	if err := rep.PrettyWrite(w); err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 1
	}
	return 0
}

// location is a SARIF location for the range from posn to end, relative to
// the module root when it lies inside it.
func location(root string, posn, end token.Position) *sarif.Location {
	rel, err := filepath.Rel(root, posn.Filename)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = posn.Filename
	}
	region := sarif.NewRegion().WithStartLine(posn.Line).WithStartColumn(posn.Column).
		WithEndLine(end.Line).WithEndColumn(end.Column)
	return sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
		WithArtifactLocation(sarif.NewSimpleArtifactLocation(filepath.ToSlash(rel)).WithURIBaseID("%SRCROOT%")).
		WithRegion(region))
}

// ruleOf is the rule a diagnostic belongs to: its category, which every
// leaseguard diagnostic sets, or its analyzer's name.
func ruleOf(act *checker.Action, d analysis.Diagnostic) string {
	if d.Category != "" {
		return d.Category
	}
	return act.Analyzer.Name
}

// moduleRoot returns the main module's directory, or the working directory.
func moduleRoot(pkgs []*packages.Package) string {
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main && p.Module.Dir != "" {
			return p.Module.Dir
		}
	}
	wd, _ := os.Getwd()
	return wd
}
