package main

// This file reads leaseguard's -json findings and places each in its
// module, as a path relative to the module's root.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A module is where a required module's files are.
type module struct{ path, dir string }

// readModules reads lines "path<TAB>dir".
func readModules(path string) ([]module, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var mods []module
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		p, d, ok := strings.Cut(line, "\t")
		if !ok || d == "" {
			return nil, fmt.Errorf("%s: %q is not 'path<TAB>dir'", path, line)
		}
		mods = append(mods, module{p, filepath.Clean(d)})
	}
	return mods, nil
}

// A finding is one diagnostic, placed in its module.
type finding struct {
	module, file string // file relative to the module's root; an absolute path when no module holds it
	line         int
	rule         string
	message      string
	test         bool
}

func (f *finding) String() string {
	if f.module == "" {
		return f.file + ":" + strconv.Itoa(f.line)
	}
	return f.module + "/" + f.file + ":" + strconv.Itoa(f.line)
}

// diagnostic is one element of the go/analysis -json output.
type diagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// readFindings reads leaseguard's -json output: package, then analyzer,
// then a list of diagnostics or an {"error": ...} object. The same
// diagnostic reported in a package and its test variant counts once.
func readFindings(path string, mods []module) ([]*finding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseFindings(data, mods)
}

func parseFindings(data []byte, mods []module) ([]*finding, error) {
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("leaseguard's output is not its -json form: %w", err)
	}
	var errs []string
	seen := make(map[finding]bool)
	var out []*finding
	for _, pkg := range sortedKeys(tree) {
		for _, analyzer := range sortedKeys(tree[pkg]) {
			raw := tree[pkg][analyzer]
			var failure struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(raw, &failure) == nil && failure.Error != "" {
				errs = append(errs, fmt.Sprintf("%s: %s: %s", pkg, analyzer, failure.Error))
				continue
			}
			var diags []diagnostic
			if err := json.Unmarshal(raw, &diags); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", pkg, analyzer, err)
			}
			for _, d := range diags {
				if d.Category == "note" || d.Category == "explain" {
					continue // what a rule says of the run, not a finding
				}
				f, err := place(d, analyzer, mods)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", pkg, analyzer, err)
				}
				if !seen[*f] {
					seen[*f] = true
					out = append(out, f)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(errs) > 0 {
		return out, fmt.Errorf("analysis failed: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// place turns a diagnostic's "file:line:col" into a finding in the module
// whose directory holds the file (the longest such directory).
func place(d diagnostic, analyzer string, mods []module) (*finding, error) {
	// The file name may hold colons; the line and column are the last two
	// fields.
	rest := d.Posn[:max(strings.LastIndex(d.Posn, ":"), 0)]
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return nil, fmt.Errorf("position %q is not file:line:col", d.Posn)
	}
	line, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return nil, fmt.Errorf("position %q: %w", d.Posn, err)
	}
	file := filepath.Clean(rest[:i])
	rule := d.Category
	if rule == "" {
		rule = analyzer
	}
	f := &finding{file: file, line: line, rule: rule, message: d.Message, test: strings.HasSuffix(file, "_test.go")}
	best := -1
	for i, m := range mods {
		if strings.HasPrefix(file, m.dir+string(filepath.Separator)) && (best < 0 || len(m.dir) > len(mods[best].dir)) {
			best = i
		}
	}
	if best >= 0 {
		f.module = mods[best].path
		f.file = filepath.ToSlash(strings.TrimPrefix(file, mods[best].dir+string(filepath.Separator)))
	} else if !strings.HasSuffix(file, ".go") {
		// The main package of a test binary, which the go command
		// generates into its build cache under a name without .go: a
		// test file too.
		f.test = true
	}
	return f, nil
}
