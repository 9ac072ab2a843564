package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leaseguard/leaseguard/analyzer"
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

// leaseRoots returns the import paths among the packages that patterns
// match that must be analysed (see above), in the listing's order, then
// the packages that leases name outside them (see leasesElsewhere). The
// listing is go list -find: names and files, without resolving imports,
// which costs less than half of a plain go list on a large module. ok is false
// when the listing failed, matched nothing, or a package in it has an error
// (a file it cannot read): the patterns are then analysed as given, so
// that the error is reported as it always was. A missing import is found
// later, by the analysis of a package that has one. err says which of
// leases matches no package at all.
func leaseRoots(patterns []string, tests bool, leases config.Patterns) (roots []string, ok bool, err error) {
	roots, broken, ok, err := listRoots(patterns, tests, leases)
	return roots, ok && len(broken) == 0, err
}

// listRoots is leaseRoots, with the errors of the listed packages that
// have one (broken): a directory or module that does not exist, a file
// that cannot be read. ok is false when the listing failed or matched
// nothing.
func listRoots(patterns []string, tests bool, leases config.Patterns) (roots, broken []string, ok bool, err error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-find", "-json=ImportPath,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Dir,Error", "--"}, patterns...)...)
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, false, nil
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
			return nil, nil, false, nil
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
		return nil, broken, true, nil
	}
	if len(listed) == 0 {
		return nil, nil, false, nil
	}
	elsewhere, err := leasesElsewhere(leases, listed)
	if err != nil {
		return nil, nil, false, err
	}
	for _, path := range elsewhere {
		if !slices.Contains(roots, path) {
			roots = append(roots, path)
		}
	}
	return roots, nil, true, nil
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

// A plan is what a standalone run analyses, and how.
type plan struct {
	flags []string // the flags given, without -json and --
	roots []string // the packages to analyse (see leaseRoots)
	json  bool     // -json
	vet   bool     // go vet can run it (see viaVet): no flag that only the in-process checker has
	// broken are the errors of packages that the patterns name and the
	// go command cannot load (a directory or module that does not
	// exist): the run stops with them, as go vet's does.
	broken []string
}

// args returns the arguments for the in-process checker: the flags, then
// the roots.
func (p *plan) args() []string {
	out := slices.Clone(p.flags)
	if p.json {
		out = append(out, "-json")
	}
	return append(append(out, "--"), p.roots...)
}

// narrow plans a standalone run of args: the packages that leaseguard
// must analyse (see leaseRoots), none when no package that the patterns
// match can have a finding. ok is false when args are left as they are:
// they do not parse (the checker reports the error), they ask for the
// flags or the version, or the listing failed. err is a -lease.packages
// pattern that matches no package.
func narrow(args []string) (p *plan, ok bool, err error) {
	scratch := config.Default()
	fs := checkerFlags(scratch)
	if fs.Parse(args) != nil || isSet(fs, "flags") || isSet(fs, "V") || fs.NArg() == 0 {
		return nil, false, nil
	}
	patterns := fs.Args()
	roots, broken, ok, err := listRoots(patterns, fs.Lookup("test").Value.String() == "true", scratch.Lease.Packages)
	switch {
	case len(broken) > 0:
		return &plan{broken: broken}, true, nil
	case !ok:
		return nil, false, err
	}
	p = &plan{roots: roots, json: isSet(fs, "json"), vet: true}
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(ownFlags, f.Name) {
			p.vet = false
		}
	})
	for _, a := range args[:len(args)-len(patterns)] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if a != "--" && (!strings.HasPrefix(a, "-") || name != "json") {
			p.flags = append(p.flags, a)
		}
	}
	return p, true, nil
}

// ownFlags are the in-process checker's own flags: with one of them, the
// run stays in process. The first five are bool flags, the next six
// strings, then -c, a number, and -test, a bool.
var ownFlags = []string{"fix", "diff", "source", "v", "all", "tags", "debug", "cpuprofile", "memprofile", "trace", "format", "c", "test"}

// checkerFlags returns a flag set that knows the flags that the checker
// defines, so that a pattern is told from a flag's value, with the
// analyzers' flags bound to cfg. It prints nothing.
func checkerFlags(cfg *config.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("leaseguard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, a := range analyzer.New(cfg) {
		fs.Var(new(boolValue), a.Name, "")
		a.Flags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, a.Name+"."+f.Name, "") })
	}
	fs.Bool("json", false, "")
	for _, name := range ownFlags[:5] {
		fs.Bool(name, false, "")
	}
	for _, name := range ownFlags[5:11] {
		fs.String(name, "", "")
	}
	fs.Int("c", -1, "")
	fs.Bool("test", true, "")
	fs.Bool("flags", false, "")
	fs.Var(new(boolValue), "V", "")
	return fs
}

// isSet reports whether the flag name was given to fs (a bool flag, given
// as true).
func isSet(fs *flag.FlagSet, name string) bool {
	switch v := fs.Lookup(name).Value.(type) {
	case *boolValue:
		return v.set
	default:
		return v.String() == "true"
	}
}

// isBool reports whether fs has a flag name that is given bare.
func isBool(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return true // unknown: the checker says so
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// cutChdir returns args without -C dir (-C=dir, --C dir), given anywhere
// among the flags before the first package, and dir ("" without one).
func cutChdir(args []string) (rest []string, dir string, err error) {
	fs := checkerFlags(config.Default())
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(rest, args[i:]...), dir, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case name == "C" && dir != "":
			return nil, "", errors.New("-C given twice")
		case name == "C" && !hasValue && i+1 == len(args):
			return nil, "", errors.New("-C needs a directory")
		case name == "C" && !hasValue:
			i++
			dir = args[i]
		case name == "C":
			dir = value
		case !hasValue && !isBool(fs, name) && i+1 < len(args):
			rest = append(rest, a, args[i+1]) // a flag and its value
			i++
		default:
			rest = append(rest, a)
		}
		if name == "C" && dir == "" {
			return nil, "", errors.New("-C needs a directory")
		}
	}
	return rest, dir, nil
}

// boolValue is a flag that may be given bare, or with any value (-V=full).
type boolValue struct{ set bool }

func (b *boolValue) String() string   { return "" }
func (b *boolValue) Set(string) error { b.set = true; return nil }
func (b *boolValue) IsBoolFlag() bool { return true }
