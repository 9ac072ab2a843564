package driver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Run standalone with text, JSON or SARIF output, leaseguard hands the
// packages it must analyse (see leaseRoots) to go vet, with itself as the
// vet tool: the go command analyses each package in a process of its own,
// in parallel, and caches each result (facts included) by the tool, its
// flags and the package's inputs, so a second run, or a run after an edit
// to one file, analyses only what the edit changed. leaseguard prints go
// vet's findings as its own. The flags that only the in-process checker
// has (-fix, -diff, -c, -debug, profiles, -test=false) keep the
// in-process checker.

// vetDiagnostic is a finding as go vet -json prints it.
type vetDiagnostic struct {
	Category string `json:"category,omitempty"`
	Posn     string `json:"posn"`
	End      string `json:"end"`
	Message  string `json:"message"`
	Related  []struct {
		Posn    string `json:"posn"`
		End     string `json:"end"`
		Message string `json:"message"`
	} `json:"related,omitempty"`

	analyzer string // the analyzer that reported it
}

// viaVet runs go vet -json on roots with this executable as the vet tool
// and flags as its flags, and prints the findings as the checker would:
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
	if all, _ := vetFindings(tree, io.Discard); badSettings(all, stderr) {
		return 2
	}
	if jsonOut {
		data, err := json.MarshalIndent(tree, "", "\t")
		if err != nil {
			fmt.Fprintf(stderr, "leaseguard: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n", data)
		return 0
	}
	diags, code := vetFindings(tree, stderr)
	findings := 0
	for _, d := range diags {
		fmt.Fprintf(stderr, "%s: %s\n", d.Posn, d.Message)
		for _, r := range d.Related {
			fmt.Fprintf(stderr, "%s: \t%s\n", r.Posn, r.Message)
		}
		if d.Category != lease.ExplainCategory && d.Category != lease.NoteCategory {
			findings++
		}
	}
	if code == 0 && findings > 0 {
		code = 3
	}
	return code
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

// badSettings reports whether any of diags says that a setting aims at
// nothing (a -fence.table Go name that does not resolve, see
// config.SettingError), and prints each such message once on stderr, as
// a bad flag is: the command then exits 2, whatever its output.
func badSettings(diags []vetDiagnostic, stderr io.Writer) bool {
	var msgs []string
	for _, d := range diags {
		if d.Category == lease.Name && config.IsSettingError(d.Message) && !slices.Contains(msgs, d.Message) {
			msgs = append(msgs, d.Message)
			fmt.Fprintf(stderr, "leaseguard: %s\n", d.Message)
		}
	}
	return len(msgs) > 0
}

// vetFindings returns the findings of tree in file order, once each (a
// package and its test variant report the same finding), each with its
// analyzer's name. An analyzer that failed on a package is reported on
// stderr, and code is then 1, else 0.
func vetFindings(tree map[string]map[string]json.RawMessage, stderr io.Writer) (diags []vetDiagnostic, code int) {
	for id, byAnalyzer := range tree {
		for name, raw := range byAnalyzer {
			var ds []vetDiagnostic
			if json.Unmarshal(raw, &ds) != nil {
				// An analyzer that failed on a package: {"error": "..."}.
				var e struct{ Error string }
				_ = json.Unmarshal(raw, &e)
				fmt.Fprintf(stderr, "leaseguard: %s: %s: %s\n", id, name, e.Error)
				code = 1
				continue
			}
			for i := range ds {
				ds[i].analyzer = name
			}
			diags = append(diags, ds...)
		}
	}
	slices.SortFunc(diags, func(a, b vetDiagnostic) int {
		return cmp.Or(comparePosn(a.Posn, b.Posn), strings.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(diags, func(a, b vetDiagnostic) bool { return a.Posn == b.Posn && a.Message == b.Message }), code
}

// comparePosn orders file:line:col positions by file, then line and
// column as numbers.
func comparePosn(a, b string) int {
	af, al, ac := splitPosn(a)
	bf, bl, bc := splitPosn(b)
	return cmp.Or(strings.Compare(af, bf), cmp.Compare(al, bl), cmp.Compare(ac, bc))
}

func splitPosn(p string) (file string, line, col int) {
	rest, c := cutLast(p)
	file, l := cutLast(rest)
	line, _ = strconv.Atoi(l)
	col, _ = strconv.Atoi(c)
	return file, line, col
}

// cutLast cuts s at its last colon.
func cutLast(s string) (before, after string) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}
