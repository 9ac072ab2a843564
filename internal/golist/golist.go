// Package golist asks the go command which packages import-path patterns
// name, without loading them: go list -find, names and directories only.
package golist

import (
	"bytes"
	"encoding/json"
	"os/exec"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// Lookup returns the import paths of the packages that patterns name
// (import-path patterns with ... wildcards, as the go command and
// -lease.packages take them) in the working directory's module, in go
// list's order, and the first pattern that names none, or "". A pattern
// that matches nothing is a warning of go list's, an import path that
// names no package an entry with an error and no directory. A directory
// with an error (build constraints exclude all its files) is a package,
// whose analysis says what is wrong.
func Lookup(patterns []string) (paths []string, none string) {
	if len(patterns) == 0 {
		return nil, ""
	}
	out, _ := exec.Command("go", append([]string{"list", "-e", "-find", "-json=ImportPath,Dir,Error", "--"}, patterns...)...).Output()
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath, Dir string
			Error           *struct{ Err string }
		}
		if dec.Decode(&p) != nil {
			break
		}
		if p.Error == nil || p.Dir != "" {
			paths = append(paths, p.ImportPath)
		}
	}
	if unmatched := config.Patterns(patterns).Unmatched(paths); len(unmatched) > 0 {
		return paths, unmatched[0]
	}
	return paths, ""
}
