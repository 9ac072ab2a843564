package driver

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/token"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

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
// to the repository root (see sarifRootOf). Only the packages that can have a finding are
// analysed (see leaseRoots), through go vet as with text output (see
// viaVet), or in process with -test=false, which go vet does not have;
// cfg holds the analyzers' settings. Like -json, it exits 0 with
// findings, 1 on a tool error, 2 on a bad flag.
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
	root := sarifRootOf(mainModuleDir())
	run := sarifRun{
		Tool:               sarifTool{Driver: sarifDriver{Name: "leaseguard", InformationURI: "https://github.com/leaseguard/leaseguard"}},
		OriginalURIBaseIDs: map[string]sarifArtifact{srcRoot: root.base()},
		Results:            []sarifResult{},
	}
	ruleIndex := make(map[string]int)
	for _, a := range analyzers {
		title, _, _ := strings.Cut(a.Doc, "\n")
		ruleIndex[a.Name] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: a.Name, ShortDescription: sarifText{title}, HelpURI: a.URL})
	}
	roots, ok, err := leaseRoots(patterns, *tests, cfg.Lease.Packages)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 2
	}
	if ok {
		if len(roots) == 0 {
			return writeSARIF(w, stderr, run)
		}
		if *tests {
			// Through go vet, as the text output goes (see viaVet); go
			// vet always analyses test files.
			var flags []string
			fs.Visit(func(f *flag.Flag) {
				if strings.Contains(f.Name, ".") { // an analyzer's
					flags = append(flags, "-"+f.Name+"="+f.Value.String())
				}
			})
			return sarifViaVet(flags, roots, root, run, ruleIndex, w, stderr)
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

	var settings []vetDiagnostic
	for act := range graph.All() {
		for _, d := range act.Diagnostics {
			if act.IsRoot {
				settings = append(settings, vetDiagnostic{Category: d.Category, Message: d.Message})
			}
		}
	}
	if badSettings(settings, stderr) {
		return 2
	}

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
			// A package and its test variant report the same finding.
			if k := (key{posn.String(), d.Message}); seen[k] {
				continue
			} else {
				seen[k] = true
			}
			rule := cmp.Or(d.Category, act.Analyzer.Name) // every leaseguard finding has its rule as category
			res := sarifResult{
				RuleID:    rule,
				RuleIndex: ruleIndex[rule],
				Level:     "error",
				Message:   sarifText{d.Message},
				Locations: []sarifLocation{location(root, act.Package.Fset, d.Pos, d.End)},
			}
			// Related information ("in this SQL") as related locations,
			// numbered from 1 within the result.
			for i, r := range d.Related {
				l := location(root, act.Package.Fset, r.Pos, r.End)
				l.ID, l.Message = i+1, &sarifText{r.Message}
				res.RelatedLocations = append(res.RelatedLocations, l)
			}
			run.Results = append(run.Results, res)
		}
	}
	// Results in file order, whatever order the packages finished in.
	slices.SortStableFunc(run.Results, func(a, b sarifResult) int {
		pa, pb := a.Locations[0].PhysicalLocation, b.Locations[0].PhysicalLocation
		return cmp.Or(strings.Compare(pa.ArtifactLocation.URI, pb.ArtifactLocation.URI), cmp.Compare(pa.Region.StartLine, pb.Region.StartLine))
	})
	if c := writeSARIF(w, stderr, run); c != 0 {
		return c
	}
	return code
}

// sarifViaVet analyses roots through go vet with flags and writes the
// findings as results of run.
func sarifViaVet(flags, roots []string, root sarifRoot, run sarifRun, ruleIndex map[string]int, w, stderr io.Writer) int {
	tree, ok := vetTree(flags, roots, stderr)
	if !ok {
		return 1
	}
	diags, code := vetFindings(tree, stderr)
	if badSettings(diags, stderr) {
		return 2
	}
	for _, d := range diags {
		rule := cmp.Or(d.Category, d.analyzer) // as in runSARIF
		res := sarifResult{
			RuleID:    rule,
			RuleIndex: ruleIndex[rule],
			Level:     "error",
			Message:   sarifText{d.Message},
			Locations: []sarifLocation{vetLocation(root, d.Posn, d.End)},
		}
		for i, r := range d.Related {
			l := vetLocation(root, r.Posn, r.End)
			l.ID, l.Message = i+1, &sarifText{r.Message}
			res.RelatedLocations = append(res.RelatedLocations, l)
		}
		run.Results = append(run.Results, res)
	}
	if c := writeSARIF(w, stderr, run); c != 0 {
		return c
	}
	return code
}

// vetLocation is a SARIF location for the range from posn to end, go
// vet's file:line:col positions (posn alone when end is empty), relative
// to root when it lies inside it.
func vetLocation(root sarifRoot, posn, end string) sarifLocation {
	file, line, col := splitPosn(posn)
	endLine, endCol := line, col
	if end != "" {
		_, endLine, endCol = splitPosn(end)
	}
	return sarifLocation{PhysicalLocation: sarifPhysLocation{
		ArtifactLocation: root.artifact(file),
		Region:           sarifRegion{StartLine: line, StartColumn: col, EndLine: endLine, EndColumn: endCol},
	}}
}

// srcRoot is the uriBaseId of locations inside the root, which the run's
// originalUriBaseIds resolves (the name GitHub's code scanning and SARIF's
// own examples use).
const srcRoot = "%SRCROOT%"

// sarifRoot is the directory that SARIF locations are relative to, and
// what it is.
type sarifRoot struct {
	dir  string // absolute
	what string // for originalUriBaseIds' description
}

// The directories whose presence makes a directory a repository's root.
var vcsDirs = []struct{ name, vcs string }{{".git", "git"}, {".hg", "Mercurial"}, {".svn", "Subversion"}, {".bzr", "Bazaar"}}

// sarifRootOf returns the root of the version-control repository that
// holds module, the main module's directory, since code scanning reads
// locations as paths from the repository's root, whatever directory of it
// the module is in; outside a repository, module itself. A .git file (a
// git worktree's) counts as a .git directory does.
func sarifRootOf(module string) sarifRoot {
	module, _ = filepath.Abs(module)
	for d := module; ; d = filepath.Dir(d) {
		for _, v := range vcsDirs {
			if _, err := os.Stat(filepath.Join(d, v.name)); err == nil {
				return sarifRoot{d, "the root of the " + v.vcs + " repository that holds the module"}
			}
		}
		if filepath.Dir(d) == d {
			return sarifRoot{module, "the module's root (no version control repository holds it)"}
		}
	}
}

// base returns the originalUriBaseIds entry of r: its directory as an
// absolute file URI, which ends in a slash as SARIF requires.
func (r sarifRoot) base() sarifArtifact {
	return sarifArtifact{URI: strings.TrimSuffix(fileURI(r.dir), "/") + "/", Description: &sarifText{r.what}}
}

// artifact returns the location of file: relative to r's directory, with
// forward slashes and escaped as a URI, when it lies inside it; else an
// absolute file URI with no base (a file of another module, outside the
// repository), never a path that would be read from the root.
func (r sarifRoot) artifact(file string) sarifArtifact {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	if rel, err := filepath.Rel(r.dir, abs); err == nil && filepath.IsLocal(rel) {
		return sarifArtifact{URI: (&url.URL{Path: filepath.ToSlash(rel)}).String(), URIBaseID: srcRoot}
	}
	return sarifArtifact{URI: fileURI(abs)}
}

// fileURI returns the file URI of the absolute path p.
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a drive letter: file:///C:/…
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// mainModuleDir returns the main module's directory, or the working
// directory outside a module (and at a workspace's root).
func mainModuleDir() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		return filepath.Dir(gomod)
	}
	wd, _ := os.Getwd()
	return wd
}

// The parts of SARIF 2.1.0 that leaseguard writes: one run, a rule per
// analyzer, a result per finding with its location and related locations.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool               sarifTool                `json:"tool"`
		OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds,omitempty"`
		Results            []sarifResult            `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string    `json:"id"`
		ShortDescription sarifText `json:"shortDescription"`
		HelpURI          string    `json:"helpUri,omitempty"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID           string          `json:"ruleId"`
		RuleIndex        int             `json:"ruleIndex"`
		Level            string          `json:"level"`
		Message          sarifText       `json:"message"`
		Locations        []sarifLocation `json:"locations"`
		RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	}
	sarifLocation struct {
		ID               int               `json:"id,omitempty"`
		Message          *sarifText        `json:"message,omitempty"`
		PhysicalLocation sarifPhysLocation `json:"physicalLocation"`
	}
	sarifPhysLocation struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI         string     `json:"uri"`
		URIBaseID   string     `json:"uriBaseId,omitempty"`
		Description *sarifText `json:"description,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
		EndLine     int `json:"endLine"`
		EndColumn   int `json:"endColumn"`
	}
)

// writeSARIF writes a SARIF log of run to w.
func writeSARIF(w, stderr io.Writer, run sarifRun) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	err := enc.Encode(sarifLog{
		Schema:  "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/main/sarif-2.1/schema/sarif-schema-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	})
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 1
	}
	return 0
}

// location is a SARIF location for the range from pos to end (pos alone
// when end is not valid), relative to root when it lies inside it.
func location(root sarifRoot, fset *token.FileSet, pos, end token.Pos) sarifLocation {
	posn := fset.Position(pos)
	last := posn
	if end.IsValid() {
		last = fset.Position(end)
	}
	return sarifLocation{PhysicalLocation: sarifPhysLocation{
		ArtifactLocation: root.artifact(posn.Filename),
		Region:           sarifRegion{StartLine: posn.Line, StartColumn: posn.Column, EndLine: last.Line, EndColumn: last.Column},
	}}
}
