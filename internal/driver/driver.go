// Package driver is the leaseguard command: under go vet -vettool it speaks
// the unitchecker protocol; run directly, it lists the packages that the
// patterns match, and analyses those that can have a finding with their
// imports' facts.
//
// Run directly, it parses its arguments once into a plan (see parse),
// lists the packages that the patterns match before loading any, and
// analyses only those that can have a finding (see listRoots) with their
// imports: through go vet (see viaVet), or, with a flag that go vet does
// not have (-test, -fix, -diff, -c, -v, -debug, -tags, the profiles), in
// this process, one package at a time with internal/depcheck, as the
// golangci-lint plugin does (see runInProcess). Whichever analysed them,
// the findings are read into one type (see finding), from which text,
// JSON, SARIF and -fix's edits are written (see fixFiles). x/tools'
// multichecker answers only what analyses nothing: help RULE, -flags and
// -V, and a command line with no package.
//
// Exit codes, run directly: 0 no findings, 3 findings, 1 a tool error (a
// package that does not compile, a pattern that matches nothing,
// conflicting fixes), 2 a bad flag or a setting that aims at nothing (a
// -lease.packages pattern that matches no package, a -fence.table Go name
// that does not resolve: see badSettings). With -json findings are
// printed as JSON and the exit code is 0 unless the tool failed; so with
// -format sarif, which writes one SARIF 2.1.0 run for GitHub code
// scanning, and with -fix, which applies the findings' fixes instead of
// printing them. Under go vet, vet itself reports and sets the exit code
// (1 with findings; 0 with go vet -json).
package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Main runs the command and does not return.
func Main() {
	cfg := config.Default()
	analyzers := analyzer.New(cfg)
	if len(os.Args) > 1 && strings.HasSuffix(os.Args[len(os.Args)-1], ".cfg") {
		// A unit of go vet: one package, in a process of its own.
		startingHeap()
		onceForVet(flag.CommandLine, os.Args[len(os.Args)-1])
		multichecker.Main(analyzers...)
	}
	os.Exit(standalone(os.Args[1:], cfg, analyzers))
}

// standalone runs the command on args, the command line without the
// program's name, and returns its exit code; where the arguments are
// x/tools' multichecker's to answer (help RULE, -flags, -V, no package;
// see errAsGiven), it hands them to it, which analyses nothing and does
// not return.
func standalone(args []string, cfg *config.Config, analyzers []*analysis.Analyzer) (code int) {
	// -C dir, as the go command takes it, anywhere among the flags:
	// change to dir before anything else, so that patterns are read in
	// another module.
	args, dir, err := cutChdir(args, analyzers)
	if err == nil && dir != "" {
		err = os.Chdir(dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "leaseguard: -C: %v\n", err)
		return 2
	}
	explain(args)
	checker := func(args []string) int {
		os.Args = append(os.Args[:1], args...)
		// A flag that it does not know (one of the command's, given
		// with -flags) gets the flag package's one line, not its usage.
		flag.Usage = func() {}
		multichecker.Main(analyzers...)
		return 1 // not reached
	}
	switch {
	case fullVersion(args):
		if err := printVersion(os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "leaseguard: -V=full: %v\n", err)
			return 1
		}
		return 0
	case len(args) == 1 && args[0] == "help":
		help(os.Stdout, analyzers)
		return 0
	case len(args) > 1 && args[0] == "help":
		return checker(args) // help RULE: the rule's reference
	}
	// A bad flag value stops the command with one line that names the
	// flag and the value (the flag's Set checks it), not the whole usage.
	p, err := parse(args, analyzers, os.Stderr)
	switch {
	case errors.Is(err, errHelp):
		usage(os.Stderr, analyzers)
		return 0
	case errors.Is(err, errAsGiven):
		return checker(args)
	case errors.Is(err, errBadFlag):
		return 2
	case err != nil:
		fmt.Fprintf(os.Stderr, "leaseguard: %v\n", err)
		return 2
	case p.format == "sarif":
		return runSARIF(p, cfg, analyzers, os.Stdout, os.Stderr)
	case p.inProcess != "":
		stop, err := startProfiles(p.profiles)
		if err != nil {
			fmt.Fprintf(os.Stderr, "leaseguard: %v\n", err)
			return 1
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(os.Stderr, "leaseguard: %v\n", err)
				code = 1
			}
		}()
	}
	// Only the packages that can have a finding, and their imports (see
	// listRoots), through go vet unless a flag keeps the run in process
	// (see viaVet and runInProcess).
	roots, broken, err := listRoots(p.patterns, p.buildFlags, p.tests, cfg.Lease.Packages)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "leaseguard: %v\n", err)
		return 2
	case len(broken) > 0:
		for _, e := range broken {
			fmt.Fprintf(os.Stderr, "leaseguard: %s\n", e)
		}
		return 1
	case len(roots) == 0:
		if p.format == "json" {
			fmt.Println("{}") // what go vet -json prints for no findings
		}
		return 0
	case p.inProcess != "":
		return runInProcess(p, cfg, roots, os.Stdout, os.Stderr)
	}
	return viaVet(withNotes(p.vetFlags), roots, p.format == "json", os.Stdout, os.Stderr)
}

// explain spells the standalone command's -explain as the setting it
// stands for, -lease.explain, which go vet passes on to the rules: what
// they understood of each lease package is printed beside the findings
// (see [lease.ExplainCategory]), and is not counted as a finding.
func explain(args []string) {
	for i, a := range args {
		switch a {
		case "--":
			return
		case "-explain", "--explain", "-explain=true", "--explain=true":
			args[i] = "-lease.explain"
		}
	}
}

// withNotes adds -lease.notes to flags unless they set it: run
// standalone, leaseguard says when a lease package's writes went
// unchecked, and does not count the note as a finding (see viaVet).
func withNotes(flags []string) []string {
	if slices.ContainsFunc(flags, isFlag("lease.notes")) {
		return flags
	}
	return append(slices.Clone(flags), "-lease.notes")
}

// isFlag returns a function that reports whether an argument is the flag
// name: -name or --name, bare or with =value.
func isFlag(name string) func(arg string) bool {
	return func(arg string) bool {
		n, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		return strings.HasPrefix(arg, "-") && n == name
	}
}

// usage writes what -h asks for: how to run it, what a run loads, and
// every flag with its usage.
func usage(w io.Writer, analyzers []*analysis.Analyzer) {
	fmt.Fprint(w, "Usage of leaseguard:\n"+helpText)
	fs := newFlagSet(analyzers)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// helpText says, before the flags, how to run it and what a run loads.
const helpText = "\n" + usageText + "\n" + loadsText + "\n"

const usageText = `  leaseguard [flags] packages        analyse, standalone
  leaseguard -C dir [flags] packages in the module at dir
  go vet -vettool=$(command -v leaseguard) [flags] packages
  leaseguard help [rule]             the rules and their settings, or one rule's reference
`

const loadsText = `Run standalone, leaseguard lists the packages that the patterns match
before it loads any, and analyses only those that can have a finding:
lease packages (//leaseguard:lease, or -lease.packages), and packages with
a comment that starts with leaseguard or a word one edit from it (a
directive or a near miss of one).
Their imports are loaded for facts. Other packages of ./... are not
type-checked, so their compile errors are not reported. A -lease.packages
pattern that matches none of the packages named is looked up on its own,
and what it names is analysed too; one that names no package is an error.
The analysis goes through go vet, which caches its results; a flag that
go vet does not have (-test, -fix, -diff, -c, -v, -debug, -tags, the
profiles) keeps it in this process.
Exit codes: 0 no findings, 3 findings, 1 a tool error, 2 a bad flag or a
setting that aims at nothing.
`

// help writes leaseguard help: how to run it, the rules, each with its
// settings (from the settings table, config.Settings), the flags of the
// command itself, and what a run loads.
func help(w io.Writer, analyzers []*analysis.Analyzer) {
	fmt.Fprint(w, `leaseguard checks lease packages: no HTTP client or model SDK in the
write path, no process clock deciding a write, and every write fenced by
the database's clock.

Usage:
`+usageText+`
Rules and their settings. A setting is the flag -RULE.SETTING, standalone
and under go vet; under golangci-lint, the key SETTING under RULE in the
linter's settings (a list where the flag takes a comma-separated one):
`)
	settings := config.Settings()
	for _, a := range analyzers {
		title, _, _ := strings.Cut(a.Doc, "\n")
		fmt.Fprintf(w, "\n  %s: %s\n", a.Name, title)
		for _, s := range settings {
			if s.Rule != a.Name {
				continue
			}
			flag := "-" + s.Rule + "." + s.Key
			switch {
			case s.List:
				flag += "=list"
			case !s.Bool:
				flag += "=name"
			}
			fmt.Fprintf(w, "    %s\n    \t%s\n", flag, s.Usage)
		}
	}
	fmt.Fprint(w, `
The command's own flags:
  -json              the findings as JSON on stdout (exit 0 with findings)
  -format sarif      the findings as one SARIF 2.1.0 run on stdout
  -explain           also what the rules understood of each lease package
  -C dir             run in dir, as the go command does
  -V=full            the version
  -fix, -diff        apply the findings' suggested fixes, or print their diff
  -test=false        leave test files out
  -h                 the usage and every flag

`+loadsText+`
The rules' references: https://github.com/leaseguard/leaseguard#the-rules
`)
}

// onceForVet makes a bad flag value, which every vet unit of a go vet run
// is given, print its one line once for the run rather than once per
// package (the standard library's included). A unit of a dependency,
// analysed only for its facts, exits 0 without output and without
// writing its facts, so that go vet caches nothing for it. Of the units of
// the packages that go vet was asked to check, the first to find the bad
// value makes a file in go's work directory, beside the units'
// directories (go removes it when it exits), prints the line and fails,
// and so go vet fails, under the header of a package of the user's; the
// others exit as a dependency's do. A later run fails the same way, since
// nothing was cached. Where the file cannot be made, every such unit
// prints the line.
func onceForVet(fs *flag.FlagSet, cfgFile string) {
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	fs.Usage = func() {
		var unit struct{ VetxOnly bool }
		if data, err := os.ReadFile(cfgFile); err == nil && json.Unmarshal(data, &unit) == nil && unit.VetxOnly {
			os.Exit(0)
		}
		work := filepath.Dir(filepath.Dir(cfgFile)) // $WORK/b001/vet.cfg
		f, err := os.OpenFile(filepath.Join(work, "leaseguard-bad-flag"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, iofs.ErrExist) {
			os.Exit(0)
		}
		if err == nil {
			f.Close()
		}
		os.Stderr.Write(msg.Bytes())
		os.Exit(2)
	}
}

// initialHeap is the heap size at which a go vet unit first collects
// garbage.
const initialHeap = 128 << 20

// startingHeap lets a go vet unit (one package in a process of its own,
// which lives a fraction of a second) grow its heap to initialHeap before
// the garbage collector first runs, as the Go compiler does for the same
// reason (cmd/compile's base.AdjustStartingHeap): most packages are
// analysed before their heap reaches it, and never collect. After the
// first collection the collector runs as usual. A GOGC setting in the
// environment is left alone.
func startingHeap() {
	if os.Getenv("GOGC") != "" {
		return
	}
	// The first heap goal is 4 MiB scaled by GOGC/100.
	debug.SetGCPercent(initialHeap / (4 << 20) * 100)
	// A finalizer runs after the first collection that finds its object
	// unreachable: then back to the default.
	runtime.SetFinalizer(new(gcSentinel), func(*gcSentinel) { debug.SetGCPercent(100) })
}

// gcSentinel is big enough, and holds a pointer, so that the tiny
// allocator does not batch it with other objects (whose finalizers might
// never run).
type gcSentinel struct {
	_ *int
	_ [4]int
}
