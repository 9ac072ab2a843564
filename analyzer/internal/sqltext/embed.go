package sqltext

import (
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// embeds reads the files that //go:embed puts into string variables of
// the package. Reading them here is safe for go vet's cache:
// vet keys a package's result on its compile action, whose key covers the
// embedded files' contents.
func embeds(fset *token.FileSet, files []*ast.File, info *types.Info) map[*types.Var]string {
	m := make(map[*types.Var]string)
	valueSpecs(files, token.VAR, func(f *ast.File, gd *ast.GenDecl, vs *ast.ValueSpec) {
		doc := vs.Doc
		if doc == nil && len(gd.Specs) == 1 {
			doc = gd.Doc
		}
		patterns := embedPatterns(doc)
		if len(patterns) != 1 || len(vs.Names) != 1 {
			return // a string takes exactly one file
		}
		obj, _ := info.Defs[vs.Names[0]].(*types.Var)
		if obj == nil || !isString(obj.Type()) {
			return
		}
		dir := filepath.Dir(fset.File(f.FileStart).Name())
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(patterns[0]))); err == nil {
			m[obj] = string(b)
		}
	})
	return m
}

// embedPatterns returns the patterns of the //go:embed lines in doc.
func embedPatterns(doc *ast.CommentGroup) []string {
	if doc == nil {
		return nil
	}
	var out []string
	for _, c := range doc.List {
		rest, ok := strings.CutPrefix(c.Text, "//go:embed ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if uq, err := strconv.Unquote(f); err == nil {
				f = uq
			}
			out = append(out, f)
		}
	}
	return out
}
