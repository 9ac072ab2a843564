package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
)

// A listed package is one that go list prints: a package of the graph, or,
// in the second listing, only its import path and export data.
type listed struct {
	ImportPath      string // its ID: "p [p.test]" for p compiled for its tests
	Name            string
	Dir             string
	ForTest         string // the package under test, for a variant compiled for a test
	CompiledGoFiles []string
	CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles,
	SwigFiles, SwigCXXFiles, SysoFiles []string
	IgnoredGoFiles, IgnoredOtherFiles []string
	Imports                           []string          // IDs of the packages it imports
	ImportMap                         map[string]string // import path in the source -> ID, where they differ
	Export                            string
	Module                            *struct {
		Path, Version, GoVersion, Dir, GoMod string
		Main, Indirect                       bool
	}
	Error      *struct{ Err string }
	DepsErrors []*struct{ Err string }
}

// list runs go list in dir with args and decodes the packages it prints.
func list(dir string, args ...string) ([]*listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var pkgs []*listed
	for dec := json.NewDecoder(&stdout); ; {
		p := new(listed)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// err returns the errors that go list found in the package or its
// imports, if any.
func (p *listed) err() error {
	var errs []error
	if p.Error != nil {
		// A compile error starts with the go command's "# path" line,
		// which the caller's message already names.
		msg := strings.TrimPrefix(p.Error.Err, "# "+p.ImportPath+"\n")
		errs = append(errs, errors.New(strings.TrimSpace(msg)))
	}
	for _, e := range p.DepsErrors {
		errs = append(errs, errors.New(e.Err))
	}
	return errors.Join(errs...)
}

// path returns the package's import path, without the variant's suffix.
func (p *listed) path() string {
	path, _, _ := strings.Cut(p.ImportPath, " ")
	return path
}

// abs returns the names, relative to the package's directory, as absolute
// paths (a cgo package's compiled files are absolute already).
func (p *listed) abs(names ...[]string) []string {
	var out []string
	for _, ns := range names {
		for _, n := range ns {
			if !filepath.IsAbs(n) {
				n = filepath.Join(p.Dir, n)
			}
			out = append(out, n)
		}
	}
	return out
}
