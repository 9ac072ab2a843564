package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Run standalone with text, JSON or SARIF output, leaseguard hands the
// packages it must analyse (see listRoots) to go vet, with itself as the
// vet tool: the go command analyses each package in a process of its own,
// in parallel, and caches each result (facts included) by the tool, its
// flags and the package's inputs, so a second run, or a run after an edit
// to one file, analyses only what the edit changed. leaseguard prints go
// vet's findings as its own. The flags that go vet does not have (-test,
// -fix, -diff, -c, -v, -debug, -tags, the profiles) keep the run in
// process (see runInProcess).

// viaVet runs go vet -json on roots with this executable as the vet tool
// and flags as its flags, and prints the findings as x/tools' checkers do:
// one JSON tree on stdout with jsonOut, else a line per finding (and one
// per related position, indented by a tab) on stderr. It returns the
// command's exit code: 1 when go vet failed, 3 for findings in text, else
// 0. Notes (-lease.notes) and explanations (-lease.explain) are printed
// but are not findings.
func viaVet(flags, roots []string, jsonOut bool, stdout, stderr io.Writer) int {
	tree, ok := vetTree(flags, roots, stderr)
	if !ok {
		return 1
	}
	fs, failed := treeFindings(tree)
	if badSettings(fs, stderr) {
		return 2
	}
	if jsonOut { // the tree says which analyzers failed
		return writeTree(stdout, stderr, tree)
	}
	code := reportFailed(stderr, failed)
	if writeText(stderr, fs, -1) > 0 && code == 0 {
		code = 3
	}
	return code
}

// writeTree writes tree, package ID -> analyzer -> findings (or an error
// object), as go vet -json prints it, and returns the exit code: 0, or 1
// if it could not be encoded.
func writeTree(stdout, stderr io.Writer, tree any) int {
	data, err := json.MarshalIndent(tree, "", "\t")
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", data)
	return 0
}

// vetTree runs go vet -json on roots with this executable as the vet tool
// and flags as its flags, and returns its findings as one tree: package ID
// -> analyzer -> findings (or an error object). ok is false when go vet
// failed; it has said why on stderr.
func vetTree(flags, roots []string, stderr io.Writer) (tree map[string]map[string]json.RawMessage, ok bool) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return nil, false
	}
	args := append([]string{"vet", "-vettool=" + exe, "-json"}, flags...)
	cmd := exec.Command("go", append(append(args, "--"), roots...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintf(stderr, "leaseguard: go vet: %v\n", err)
		}
		return nil, false
	}
	// One tree per vet unit.
	tree = make(map[string]map[string]json.RawMessage)
	dec := json.NewDecoder(&out)
	for {
		var unit map[string]map[string]json.RawMessage
		if err := dec.Decode(&unit); err == io.EOF {
			return tree, true
		} else if err != nil {
			fmt.Fprintf(stderr, "leaseguard: reading go vet's output: %v\n", err)
			return nil, false
		}
		for id, byAnalyzer := range unit {
			tree[id] = byAnalyzer
		}
	}
}
