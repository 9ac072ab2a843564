package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/internal/golist"
)

// Run directly, leaseguard analyses only the packages that can have a
// finding, and the packages they import (for facts). Before anything is
// type-checked, it lists the packages that the patterns match (go list
// -find: names and files, no imports resolved, no types) and keeps:
//
//   - the packages that -lease.packages names;
//   - the packages with a comment that starts with leaseguard, or with a
//     word one edit from it (lease-guard): a lease, allow or sql
//     directive, or a near miss of one (// LeaseGuard: lease,
//     //lease-guard:lease), which the lease analyzer reports in any
//     package.
//
// No other package can have a finding: every rule reports only in lease
// packages, and directives are reported where they are written. So
// leaseguard ./... on a repository with no lease package costs less than
// go list ./... does, and one with a lease package costs what that
// package's import graph does. A package that is not kept is not
// type-checked, so a compile error in it is not reported.

// listRoots returns the import paths among the packages that patterns
// match that must be analysed (see above), in the listing's order, then
// the packages that leases name outside them (see leasesElsewhere). The
// listing is go list -find with buildFlags: names and files, without
// resolving imports, which costs less than half of a plain go list on a
// large module. broken says why there is nothing to analyse: the go
// command's message when the listing failed, that the patterns matched no
// package, or the error of each listed package that has one (a directory
// or module that does not exist, a file that cannot be read). A missing
// import is found later, by the analysis of a package that has one. err
// says which of leases matches no package at all.
func listRoots(patterns, buildFlags []string, tests bool, leases config.Patterns) (roots, broken []string, err error) {
	args := append([]string{"list", "-e", "-find", "-json=ImportPath,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Dir,Error"}, buildFlags...)
	out, listErr := exec.Command("go", append(append(args, "--"), patterns...)...).Output()
	if listErr != nil {
		return nil, goCommandError(listErr), nil
	}
	matcher := config.NewMatcher(leases)
	var listed []string // the import paths listed, and of external test packages
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath                                   string
			Dir                                          string
			GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
			Error                                        *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, []string{fmt.Sprintf("reading go list's output: %v", err)}, nil
		}
		if p.Error != nil {
			broken = append(broken, p.Error.Err)
			continue
		}
		listed = append(listed, p.ImportPath)
		files := slices.Concat(p.GoFiles, p.CgoFiles)
		paths := []string{p.ImportPath}
		if tests {
			files = slices.Concat(files, p.TestGoFiles, p.XTestGoFiles)
			// An external test package is checked with the package it tests.
			if len(p.XTestGoFiles) > 0 {
				listed = append(listed, p.ImportPath+"_test")
				paths = append(paths, p.ImportPath+"_test")
			}
		}
		for i, name := range files {
			files[i] = filepath.Join(p.Dir, name)
		}
		if lease.Candidate(matcher, paths, files) {
			roots = append(roots, p.ImportPath)
		}
	}
	if len(broken) > 0 {
		return nil, broken, nil
	}
	if len(listed) == 0 {
		return nil, []string{strings.Join(patterns, " ") + " matched no packages"}, nil
	}
	elsewhere, err := leasesElsewhere(leases, listed)
	if err != nil {
		return nil, nil, err
	}
	for _, path := range elsewhere {
		if !slices.Contains(roots, path) {
			roots = append(roots, path)
		}
	}
	return roots, nil, nil
}

// goCommandError returns the lines of what the go command said on
// stderr when it failed with err, without its "go: " prefix, or err
// itself when it said nothing.
func goCommandError(err error) []string {
	var exit *exec.ExitError
	if !errors.As(err, &exit) || len(bytes.TrimSpace(exit.Stderr)) == 0 {
		return []string{fmt.Sprintf("go list: %v", err)}
	}
	var lines []string
	for line := range strings.Lines(string(bytes.TrimSpace(exit.Stderr))) {
		lines = append(lines, strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "go: "))
	}
	return lines
}

// leasesElsewhere returns the packages that the leases patterns name
// outside listed, the packages that the command line names: a
// -lease.packages pattern that matches none of listed is looked up on its
// own (go list -find), and the packages it names are analysed too, a
// module dependency or a package outside ./... as much as any. A pattern
// that names no package there either is an error that names it: a setting
// that aims at nothing would leave the run silent, as if it had passed.
func leasesElsewhere(leases config.Patterns, listed []string) ([]string, error) {
	found, none := golist.Lookup(leases.Unmatched(listed))
	if none != "" {
		return nil, fmt.Errorf("-lease.packages: %q matches no package: name lease packages by import path, as go list prints them", none)
	}
	return found, nil
}
