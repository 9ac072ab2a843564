package sqltext

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// segment is a string literal that supplies part of a text.
type segment struct {
	lit  *ast.BasicLit
	text string // its value
	base int    // offset in the literal's source of its value's first byte
}

// Locate returns the source position of offset off of t's SQL, when the
// text is spelled out in this package as string literals (at the call, or
// in the one constant declaration that has that value) whose bytes map
// one to one onto the value.
func (c *Texts) Locate(at ast.Expr, t Text, off int) (token.Pos, bool) {
	if off < 0 || !t.Exact {
		return token.NoPos, false
	}
	var candidates []ast.Expr
	if at != nil {
		candidates = append(candidates, at)
	}
	if decls := c.consts[t.SQL]; len(decls) == 1 {
		candidates = append(candidates, decls[0])
	}
	for _, e := range candidates {
		segs, ok := c.segments(e, 0)
		if !ok {
			continue
		}
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.text)
		}
		if b.String() != t.SQL {
			continue
		}
		for _, s := range segs {
			if off < len(s.text) || (off == len(s.text) && s == segs[len(segs)-1]) {
				return s.lit.Pos() + token.Pos(s.base+off), true
			}
			off -= len(s.text)
		}
	}
	return token.NoPos, false
}

// segments flattens a constant string expression into its literals:
// literals joined by +, and constants of this package. depth bounds the
// chase through constants.
func (c *Texts) segments(e ast.Expr, depth int) ([]segment, bool) {
	if depth > 8 {
		return nil, false
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.segments(e.X, depth)
	case *ast.BasicLit:
		s, ok := literal(e)
		return []segment{s}, ok
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return nil, false
		}
		x, ok := c.segments(e.X, depth)
		if !ok {
			return nil, false
		}
		y, ok := c.segments(e.Y, depth)
		return append(x, y...), ok
	case *ast.Ident:
		return c.constSegments(c.info.Uses[e], depth)
	case *ast.SelectorExpr:
		return c.constSegments(c.info.Uses[e.Sel], depth)
	}
	return nil, false
}

func (c *Texts) constSegments(obj types.Object, depth int) ([]segment, bool) {
	k, ok := obj.(*types.Const)
	if !ok {
		return nil, false
	}
	val, ok := c.constExprs[k] // this package's constants only
	if !ok {
		return nil, false
	}
	return c.segments(val, depth+1)
}

// literal returns the segment of a string literal whose source bytes are
// its value's bytes: a raw string without carriage returns, or an
// interpreted one without escapes.
func literal(lit *ast.BasicLit) (segment, bool) {
	if lit.Kind != token.STRING {
		return segment{}, false
	}
	v, err := strconv.Unquote(lit.Value)
	if err != nil || len(v) != len(lit.Value)-2 {
		return segment{}, false
	}
	return segment{lit: lit, text: v, base: 1}, true
}

// Decl returns the one constant declaration of this package whose value is
// sql, or nil.
func (c *Texts) Decl(sql string) ast.Expr {
	if decls := c.consts[sql]; len(decls) == 1 {
		return decls[0]
	}
	return nil
}

// Embeds returns the contents of the files that //go:embed puts into the
// package's string variables.
func (c *Texts) Embeds() []string {
	out := make([]string, 0, len(c.embeds))
	for _, s := range c.embeds {
		out = append(out, s)
	}
	return out
}

// Consts returns the values of the package's string constants.
func (c *Texts) Consts() []string {
	out := make([]string, 0, len(c.consts))
	for s := range c.consts {
		out = append(out, s)
	}
	return out
}

// constDecls returns the expression that declares each string constant of
// the package, and the same by value.
func constDecls(files []*ast.File, info *types.Info) (map[*types.Const]ast.Expr, map[string][]ast.Expr) {
	byObj := make(map[*types.Const]ast.Expr)
	byValue := make(map[string][]ast.Expr)
	valueSpecs(files, token.CONST, func(_ *ast.File, _ *ast.GenDecl, vs *ast.ValueSpec) {
		if len(vs.Values) != len(vs.Names) {
			return
		}
		for i, name := range vs.Names {
			obj, _ := info.Defs[name].(*types.Const)
			if obj == nil || obj.Val().Kind() != constant.String {
				continue
			}
			s := constant.StringVal(obj.Val())
			byObj[obj] = vs.Values[i]
			byValue[s] = append(byValue[s], vs.Values[i])
		}
	})
	return byObj, byValue
}

// valueSpecs calls f for each spec of the files' top-level declarations
// of tok (token.CONST or token.VAR), with its file and declaration.
func valueSpecs(files []*ast.File, tok token.Token, f func(*ast.File, *ast.GenDecl, *ast.ValueSpec)) {
	for _, file := range files {
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != tok {
				continue
			}
			for _, spec := range gd.Specs {
				f(file, gd, spec.(*ast.ValueSpec))
			}
		}
	}
}
