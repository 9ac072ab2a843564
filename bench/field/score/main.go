// Command score compares leaseguard's findings on public lease packages
// with labels that a reviewer wrote by reading the code.
//
//	score -dir DIR ENTRY.tsv...
//
// For each labels file ENTRY.tsv (the format is in bench/field/README.md),
// it reads DIR/ENTRY/modules.tsv (module path, tab, the module's directory)
// and the -json output of each mode, DIR/ENTRY/MODE.json (default,
// configured), which bench/field/run.sh writes. A finding is its module,
// its file relative to the module's root, its line and its rule; findings
// in test files (_test.go, and a test binary's generated main) are listed
// apart and not scored. Findings and labels are matched one to one on
// module, file and rule with the finding's line in the label's range; a
// further finding on a label that is already matched is a duplicate, not a
// false positive.
//
// It prints TP/FP/FN, precision and recall per entry, mode and rule, the
// totals per mode and rule over all entries, then every false positive
// (with the message, and the reviewer's note where a "# ok" line covers
// it) and every false negative (with the label's why).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// rules are the scored rules, in the order they are printed.
var rules = []string{"imports", "clock", "fence"}

// modes are leaseguard's runs on each entry, in the order they are printed.
var modes = []string{"default", "configured"}

func main() {
	dir := flag.String("dir", "", "the directory that run.sh wrote (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: score -dir DIR ENTRY.tsv...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var entries []*entry
	for _, path := range flag.Args() {
		e, err := readEntryFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "score: %v\n", err)
			os.Exit(1)
		}
		entries = append(entries, e)
	}
	var results []*result
	for _, e := range entries {
		d := filepath.Join(*dir, e.name)
		mods, err := readModules(filepath.Join(d, "modules.tsv"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "score: %s: %v\n", e.name, err)
			os.Exit(1)
		}
		for _, mode := range modes {
			r := &result{entry: e, mode: mode}
			findings, err := readFindings(filepath.Join(d, mode+".json"), mods)
			if err != nil {
				// A run in which some packages failed is said at the
				// top; the findings of the packages that loaded are
				// scored, and the labels of the others count as
				// missed.
				r.failed = err.Error()
			}
			r.score(findings)
			results = append(results, r)
		}
	}
	report(os.Stdout, results)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
