package driver

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// -fix applies the first suggested fix of each finding (fence offers
// one: "Add FOR SHARE to the fence"), as x/tools' checkers do, and -diff
// with it prints what -fix would write. The edits are applied as the
// rules made them: the file is not formatted again, and no import is
// added or removed. Fixes that would edit a generated file are left out,
// since the generator would undo them. Two fixes whose edits overlap are
// refused, with an error that names both, and then no file is written:
// the user decides, rather than -fix keeping whichever came first.

// A fixedFile is a file that fixes edit: its content before and after.
type fixedFile struct {
	name     string
	old, new []byte
}

// A fixEdit is an edit of a fix, with what the fix is.
type fixEdit struct {
	textEdit
	fix int // the fix's index in fixes
}

// A fixRef is a fix that fixFiles applies: its message and the position
// of the finding that offers it.
type fixRef struct{ message, posn string }

// fixFiles returns the files that the first suggested fix of each of fs
// edits, sorted by name, with their content after every fix, how many
// fixes it applied, and how many it left out because they edit a
// generated file. An edit that several fixes make (findings that ask for
// the same change) is made once. The error names the two fixes whose
// edits overlap, a file that changed since it was analysed, or one that
// cannot be read; then there are no files.
func fixFiles(fs []finding) (files []fixedFile, applied, skipped int, err error) {
	content := make(map[string][]byte)
	read := func(name string) ([]byte, error) {
		if data, ok := content[name]; ok {
			return data, nil
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		content[name] = data
		return data, nil
	}
	var fixes []fixRef
	byFile := make(map[string][]fixEdit)
fixes:
	for _, f := range fs {
		if len(f.SuggestedFixes) == 0 {
			continue
		}
		fix := f.SuggestedFixes[0]
		for _, e := range fix.Edits {
			data, err := read(e.Filename)
			switch {
			case err != nil:
				return nil, 0, 0, err
			case e.size != 0 && len(data) != e.size:
				return nil, 0, 0, fmt.Errorf("%s changed since it was analysed (%d bytes, now %d)", e.Filename, e.size, len(data))
			case e.Start < 0 || e.Start > e.End || e.End > len(data):
				return nil, 0, 0, fmt.Errorf("the fix %q of the finding at %s edits %s outside it (bytes %d to %d of %d)", fix.Message, f.Posn, e.Filename, e.Start, e.End, len(data))
			case isGenerated(data):
				skipped++
				continue fixes
			}
		}
		for _, e := range fix.Edits {
			byFile[e.Filename] = append(byFile[e.Filename], fixEdit{e, len(fixes)})
		}
		fixes = append(fixes, fixRef{fix.Message, f.Posn})
	}
	for _, name := range slices.Sorted(maps.Keys(byFile)) {
		edits := byFile[name]
		slices.SortStableFunc(edits, func(a, b fixEdit) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), strings.Compare(a.New, b.New))
		})
		edits = slices.CompactFunc(edits, func(a, b fixEdit) bool { return a.Start == b.Start && a.End == b.End && a.New == b.New })
		for i := 1; i < len(edits); i++ {
			if a, b := edits[i-1].fix, edits[i].fix; edits[i].Start < edits[i-1].End || edits[i].Start == edits[i-1].Start {
				return nil, 0, 0, conflict(name, fixes[min(a, b)], fixes[max(a, b)], a == b)
			}
		}
		old := content[name]
		var out bytes.Buffer
		last := 0
		for _, e := range edits {
			out.Write(old[last:e.Start])
			out.WriteString(e.New)
			last = e.End
		}
		out.Write(old[last:])
		files = append(files, fixedFile{name: name, old: old, new: out.Bytes()})
	}
	return files, len(fixes), skipped, nil
}

// conflict is the error for two fixes that edit the same text of file,
// in the order of the findings, or for one (same) whose edits overlap.
func conflict(file string, a, b fixRef, same bool) error {
	if same {
		return fmt.Errorf("the fix %q of the finding at %s edits the same text of %s twice", a.message, a.posn, file)
	}
	return fmt.Errorf("fixes conflict: %q of the finding at %s and %q of the finding at %s edit the same text of %s", a.message, a.posn, b.message, b.posn, file)
}

// isGenerated reports whether src, a file's content, is Go with the
// comment that marks generated code.
func isGenerated(src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.PackageClauseOnly|parser.ParseComments)
	return err == nil && ast.IsGenerated(f)
}

// writeFixes writes files' new content, each with the mode it has. The
// error names the files it could not write.
func writeFixes(files []fixedFile) error {
	var errs []error
	for _, f := range files {
		mode := os.FileMode(0o644)
		if info, err := os.Stat(f.name); err == nil {
			mode = info.Mode().Perm()
		}
		if err := os.WriteFile(f.name, f.new, mode); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeDiff writes to w a unified diff of each of files, from its old
// content to its new, as x/tools' checkers' -fix -diff does: labelled
// "NAME (old)" and "NAME (new)", three lines of context.
func writeDiff(w io.Writer, files []fixedFile) error {
	for _, f := range files {
		if _, err := io.WriteString(w, udiff.Unified(f.name+" (old)", f.name+" (new)", string(f.old), string(f.new))); err != nil {
			return err
		}
	}
	return nil
}

// plural returns n and one, or many unless n is 1: "1 fix", "2 fixes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
