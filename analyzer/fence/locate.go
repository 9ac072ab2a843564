package fence

import (
	"go/ast"
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

// locate returns the source position of offset off of t's SQL, when the
// text is spelled out in this package as string literals (at the call, or
// in the one constant declaration that has that value) whose bytes map
// one to one onto the value.
func (c *checker) locate(at ast.Expr, t text, off int) (token.Pos, bool) {
	if off < 0 || !t.exact {
		return token.NoPos, false
	}
	var candidates []ast.Expr
	if at != nil {
		candidates = append(candidates, at)
	}
	if decls := c.consts[t.sql]; len(decls) == 1 {
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
		if b.String() != t.sql {
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
func (c *checker) segments(e ast.Expr, depth int) ([]segment, bool) {
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
		return c.constSegments(c.pass.TypesInfo.Uses[e], depth)
	case *ast.SelectorExpr:
		return c.constSegments(c.pass.TypesInfo.Uses[e.Sel], depth)
	}
	return nil, false
}

func (c *checker) constSegments(obj types.Object, depth int) ([]segment, bool) {
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
