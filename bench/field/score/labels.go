package main

// This file reads an entry's labels: the findings a careful reviewer
// would report, and the places they considered and cleared, each with
// its reason.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A label is a fact about the code, or with ok set a considered non-finding.
type label struct {
	module, file string
	from, to     int // the line range, inclusive
	rule, why    string
	ok           bool
}

func (l *label) covers(f *finding) bool {
	return l.module == f.module && l.file == f.file && l.rule == f.rule && l.from <= f.line && f.line <= l.to
}

func (l *label) String() string {
	lines := strconv.Itoa(l.from)
	if l.to != l.from {
		lines += "-" + strconv.Itoa(l.to)
	}
	return l.module + "/" + l.file + ":" + lines
}

// An entry is one labels file.
type entry struct {
	name       string
	modules    []string // path@version
	packages   []string
	configured []string
	labels     []*label // facts
	oks        []*label // considered non-findings
}

// readEntryFile reads a labels file.
func readEntryFile(path string) (*entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e, err := parseEntry(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if want := strings.TrimSuffix(filepath.Base(path), ".tsv"); e.name != want {
		return nil, fmt.Errorf("%s: entry %q does not match the file name", path, e.name)
	}
	return e, nil
}

// parseEntry reads the labels format: "# key: value" header lines, "# ok"
// lines, the column header, and one label a line.
func parseEntry(r io.Reader) (*entry, error) {
	e := new(entry)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "# ok\t"):
			l, err := parseLabel(strings.Split(line, "\t")[1:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			l.ok = true
			e.oks = append(e.oks, l)
		case strings.HasPrefix(line, "#"):
			key, value, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
			fields := strings.Fields(value)
			switch key {
			case "entry":
				e.name = strings.TrimSpace(value)
			case "module":
				if len(fields) > 0 { // the value may be followed by a comment
					e.modules = append(e.modules, fields[0])
				}
			case "packages":
				e.packages = append(e.packages, fields...)
			case "configured":
				e.configured = append(e.configured, fields...)
			}
		case line == "module\tfile\tline\trule\twhy":
		default:
			l, err := parseLabel(strings.Split(line, "\t"))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			e.labels = append(e.labels, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case e.name == "":
		return nil, errors.New("no '# entry:' line")
	case len(e.modules) == 0:
		return nil, errors.New("no '# module:' line")
	case len(e.packages) == 0:
		return nil, errors.New("no '# packages:' line")
	}
	return e, nil
}

func parseLabel(fields []string) (*label, error) {
	if len(fields) != 5 {
		return nil, fmt.Errorf("want 5 tab-separated fields (module, file, line, rule, why), have %d", len(fields))
	}
	l := &label{module: fields[0], file: fields[1], rule: fields[3], why: fields[4]}
	from, to, isRange := strings.Cut(fields[2], "-")
	var err error
	if l.from, err = strconv.Atoi(from); err != nil {
		return nil, fmt.Errorf("line %q: %w", fields[2], err)
	}
	l.to = l.from
	if isRange {
		if l.to, err = strconv.Atoi(to); err != nil {
			return nil, fmt.Errorf("line %q: %w", fields[2], err)
		}
	}
	switch {
	case l.from < 1 || l.to < l.from:
		return nil, fmt.Errorf("line %q: not N or N-M with 1 <= N <= M", fields[2])
	case l.module == "" || l.file == "" || filepath.IsAbs(l.file):
		return nil, errors.New("module and a module-relative file are required")
	case !isRule(l.rule):
		return nil, fmt.Errorf("rule %q: want one of %s", l.rule, strings.Join(rules, ", "))
	}
	return l, nil
}

func isRule(s string) bool {
	for _, r := range rules {
		if s == r {
			return true
		}
	}
	return false
}
