package driver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// runSARIF analyses the packages of p and writes one SARIF 2.1.0 run to
// w, with a rule per analyzer and locations relative to the repository
// root (see sarifRootOf). Only the packages that can have a finding are
// analysed (see listRoots), through go vet as with text output (see
// viaVet), or in process with -test=false, which go vet does not have
// (see runInProcess); cfg holds the analyzers' settings, set by parse.
// Like -json, it exits 0 with findings, 1 on a tool error, 2 on a setting
// that aims at nothing.
func runSARIF(p *plan, cfg *config.Config, analyzers []*analysis.Analyzer, w, stderr io.Writer) int {
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
	roots, broken, err := listRoots(p.patterns, p.buildFlags, p.tests, cfg.Lease.Packages)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 2
	case len(broken) > 0:
		for _, e := range broken {
			fmt.Fprintf(stderr, "leaseguard: %s\n", e)
		}
		return 1
	case len(roots) == 0:
		return writeSARIF(w, stderr, run)
	case p.tests:
		// Through go vet, as the text output goes (see viaVet); go vet
		// always analyses test files.
		tree, ok := vetTree(p.vetFlags, roots, stderr)
		if !ok {
			return 1
		}
		found, failed := treeFindings(tree)
		return finishSARIF(w, stderr, run, root, ruleIndex, found, failed)
	}
	found, _, ok := analyseInProcess(p, roots, stderr)
	if !ok {
		return 1
	}
	return finishSARIF(w, stderr, run, root, ruleIndex, sortFindings(found), nil)
}

// finishSARIF writes fs as the results of run, with locations relative to
// root, unless one of them says that a setting aims at nothing (exit 2).
// It returns the exit code: 1 if an analyzer failed (see reportFailed) or
// the log could not be written, else 0.
func finishSARIF(w, stderr io.Writer, run sarifRun, root sarifRoot, ruleIndex map[string]int, fs []finding, failed []string) int {
	if badSettings(fs, stderr) {
		return 2
	}
	code := reportFailed(stderr, failed)
	run.Results = append(run.Results, sarifResults(root, ruleIndex, fs)...)
	if c := writeSARIF(w, stderr, run); c != 0 {
		return c
	}
	return code
}

// sarifResults returns a result for each of fs, in their order, with
// their related positions ("in this SQL") as related locations, numbered
// from 1 within the result; ruleIndex gives each rule's index in the
// run's rules.
func sarifResults(root sarifRoot, ruleIndex map[string]int, fs []finding) []sarifResult {
	var out []sarifResult
	for _, f := range fs {
		res := sarifResult{
			RuleID:    f.rule(),
			RuleIndex: ruleIndex[f.rule()],
			Level:     "error",
			Message:   sarifText{f.Message},
			Locations: []sarifLocation{location(root, f.Posn, f.End)},
		}
		for i, r := range f.Related {
			l := location(root, r.Posn, r.End)
			l.ID, l.Message = i+1, &sarifText{r.Message}
			res.RelatedLocations = append(res.RelatedLocations, l)
		}
		out = append(out, res)
	}
	return out
}

// location is a SARIF location for the range from posn to end, file:line:col
// positions (posn alone when end is empty), relative to root when it lies
// inside it.
func location(root sarifRoot, posn, end string) sarifLocation {
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
