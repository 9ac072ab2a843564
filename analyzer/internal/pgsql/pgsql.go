// Package pgsql reads SQL texts with PostgreSQL's own parser (pg_query, the
// server's grammar compiled in: as C with cgo, parser_cgo.go, or as
// WebAssembly run by wazero without, parser_wazero.go) and offers what the rules need of its
// trees: walking them, mapping their offsets back to the text as written,
// and describing errors in the user's terms.
//
// The parser is C code that recurses over the tree it builds, and a text it
// cannot survive (tens of thousands of chained operators or UNION arms)
// overflows the C stack and kills the process: recover cannot catch that.
// So every text is scanned first with PostgreSQL's scanner, which is
// iterative, and a text whose tree would be too deep or that is too large
// is never handed to the parser: Parse returns a *TooComplexError instead.
package pgsql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// The budget of a text that the parser may read.
const (
	// MaxLen is the longest text parsed, in bytes.
	MaxLen = 4 << 20
	// maxDepth bounds the estimated depth of the tree (see depth). The
	// parse trees cross into Go as protocol buffers, whose decoder refuses
	// nesting past 10,000 messages; the C stack lasts somewhat beyond. A
	// chain of 1,000 operators, or 400 nested subqueries, stays below it.
	maxDepth = 2000
)

// TooComplexError is returned for a text that is not handed to the parser
// because it is too large or its tree too deep to check safely.
type TooComplexError struct {
	Len    int // the text's length in bytes, when that was the reason
	Offset int // where the depth ran over, in the text as written, or -1
}

func (e *TooComplexError) Error() string {
	if e.Len > 0 {
		return fmt.Sprintf("SQL of %d bytes is too large to check", e.Len)
	}
	return "SQL is too deeply nested to check (chained operators or subqueries)"
}

// parseError is the parser's error, whichever parser is built in
// (parser_cgo.go, parser_wazero.go).
type parseError struct {
	Message   string
	Cursorpos int // the character (from 1) at which the parser stopped, or 0
}

func (e *parseError) Error() string { return e.Message }

// Parsed is one SQL text as PostgreSQL's parser reads it.
type Parsed struct {
	Stmts []*pg_query.RawStmt
	Err   error  // why the text was not parsed; Stmts is nil then
	SQL   string // the text as written
	Src   string // the text the parser read

	toks []*pg_query.ScanToken // Src's tokens, nil when Src did not scan (offsets into Src, never SQL)

	// The parser reads the text with pgx named arguments (@name) turned
	// into positional parameters; shifts map its offsets back.
	shifts []shift
}

// shift records that, from rewritten offset at on, offsets in the
// original text are delta further on.
type shift struct{ at, delta int }

// Orig returns the offset in the original text of offset off in Src.
func (p *Parsed) Orig(off int) int {
	d := 0
	for _, s := range p.shifts {
		if off < s.at {
			break
		}
		d = s.delta
	}
	return off + d
}

// Parse parses sql with the PostgreSQL parser, pgx named arguments
// understood as parameters rather than as the prefix operator @. A text
// over the budget is not parsed (Err is a *TooComplexError).
func Parse(sql string) *Parsed {
	if len(sql) > MaxLen {
		return &Parsed{Err: &TooComplexError{Len: len(sql), Offset: -1}, SQL: sql, Src: sql}
	}
	p := &Parsed{SQL: sql, Src: sql}
	toks, err := scan(sql)
	if err != nil {
		// The scanner stops at what the parser would stop at (an
		// unterminated string): let the parser say what it is.
		if _, perr := parse(sql); perr != nil {
			p.Err = perr
			return p
		}
		p.Err = err
		return p
	}
	p.toks = toks.Tokens
	if strings.Contains(sql, "@") {
		p.Src, p.shifts = namedArgs(sql, p.toks)
		if p.shifts != nil {
			if toks, err = scan(p.Src); err != nil {
				p.toks = nil // the tokens were of the text as written
				p.Err = err
				return p
			}
			p.toks = toks.Tokens
		}
	}
	if off := deep(p.toks); off >= 0 {
		p.Err = &TooComplexError{Offset: p.Orig(off)}
		return p
	}
	tree, err := parse(p.Src)
	if err != nil {
		if strings.Contains(err.Error(), "exceeded maximum recursion depth") {
			err = &TooComplexError{Offset: -1}
		}
		p.Err = err
		return p
	}
	p.Stmts = tree.Stmts
	return p
}

// deep returns the offset of the first token at which the estimated depth
// of the parse tree exceeds maxDepth, or -1. The estimate: every open
// parenthesis starts a level (a subquery or an expression costs a few
// nodes); within a level every operator since the last comma, AND or OR
// deepens the tree by one node and its wrapper, since the grammar nests a
// chain a + b + c as ((a + b) + c), and so does every UNION, INTERSECT or
// EXCEPT since the statement began. AND and OR chains are flat lists in the
// tree and cost nothing.
func deep(toks []*pg_query.ScanToken) int {
	const perLevel, perOp = 4, 2
	type level struct{ ops, setOps int }
	levels := []level{{}}
	depth := perLevel
	for _, t := range toks {
		top := &levels[len(levels)-1]
		switch {
		case t.Token == pg_query.Token_ASCII_40: // (
			levels = append(levels, level{})
			depth += perLevel
		case t.Token == pg_query.Token_ASCII_41: // )
			if len(levels) > 1 {
				depth -= perLevel + perOp*(top.ops+top.setOps)
				levels = levels[:len(levels)-1]
			}
		case t.Token == pg_query.Token_ASCII_59: // ;
			depth -= perOp * (top.ops + top.setOps)
			*top = level{}
		case t.Token == pg_query.Token_ASCII_44, t.Token == pg_query.Token_AND, t.Token == pg_query.Token_OR: // ,
			depth -= perOp * top.ops
			top.ops = 0
		case t.Token == pg_query.Token_UNION, t.Token == pg_query.Token_INTERSECT, t.Token == pg_query.Token_EXCEPT:
			top.setOps++
			depth += perOp
		case isOperator(t.Token):
			top.ops++
			depth += perOp
		}
		if depth > maxDepth {
			return int(t.Start)
		}
	}
	return -1
}

// isOperator reports whether tok builds a node over its operands.
func isOperator(tok pg_query.Token) bool {
	switch tok {
	case pg_query.Token_Op, pg_query.Token_TYPECAST,
		pg_query.Token_ASCII_43, pg_query.Token_ASCII_45, pg_query.Token_ASCII_42, pg_query.Token_ASCII_47,
		pg_query.Token_ASCII_37, pg_query.Token_ASCII_94, pg_query.Token_ASCII_60, pg_query.Token_ASCII_62,
		pg_query.Token_ASCII_61, pg_query.Token_LESS_EQUALS, pg_query.Token_GREATER_EQUALS, pg_query.Token_NOT_EQUALS,
		pg_query.Token_IS, pg_query.Token_LIKE, pg_query.Token_ILIKE, pg_query.Token_BETWEEN,
		pg_query.Token_COLLATE, pg_query.Token_AT:
		return true
	}
	return false
}

// NamedArgs rewrites pgx named arguments (@name, as pgx.NamedArgs binds
// them) in sql into positional parameters, one number per name, as pgx
// does. It reads the text with PostgreSQL's own scanner, so an @ in a
// string literal, a quoted identifier or a comment is left alone, and so is
// @ followed by white space (the absolute-value operator).
func NamedArgs(sql string) string {
	toks, err := scan(sql)
	if err != nil {
		return sql
	}
	out, _ := namedArgs(sql, toks.Tokens)
	return out
}

func namedArgs(sql string, toks []*pg_query.ScanToken) (string, []shift) {
	var b strings.Builder
	var shifts []shift
	numbers := make(map[string]int)
	last, delta := 0, 0
	for i := 0; i+1 < len(toks); i++ {
		op, name := toks[i], toks[i+1]
		if op.Token != pg_query.Token_Op || sql[op.End-1] != '@' || op.End != name.Start {
			continue
		}
		if name.Token != pg_query.Token_IDENT && name.KeywordKind == pg_query.KeywordKind_NO_KEYWORD {
			continue
		}
		key := strings.ToLower(sql[name.Start:name.End])
		n, ok := numbers[key]
		if !ok {
			n = len(numbers) + 1
			numbers[key] = n
		}
		param := "$" + strconv.Itoa(n)
		at := int(op.End) - 1 // the @, which may end a longer operator (=@)
		b.WriteString(sql[last:at])
		b.WriteString(param)
		last = int(name.End)
		delta += (last - at) - len(param)
		shifts = append(shifts, shift{at: b.Len(), delta: delta})
	}
	if shifts == nil {
		return sql, nil
	}
	b.WriteString(sql[last:])
	return b.String(), shifts
}

// Spell returns a parameter as written at offset loc of Src ($3, or @name
// for a pgx named argument), or fallback.
func (p *Parsed) Spell(loc int, fallback string) string {
	o := p.Orig(loc)
	if o < 0 || o >= len(p.SQL) || (p.SQL[o] != '@' && p.SQL[o] != '$') {
		return fallback
	}
	end := o + 1
	for end < len(p.SQL) && (p.SQL[end] == '_' || unicode.IsLetter(rune(p.SQL[end])) || unicode.IsDigit(rune(p.SQL[end]))) {
		end++
	}
	return p.SQL[o:end]
}

// Position returns the line and column (1-based, counting characters, as
// PostgreSQL does) of byte offset off in sql.
func Position(sql string, off int) (line, col int) {
	off = min(max(off, 0), len(sql))
	start := strings.LastIndexByte(sql[:off], '\n') + 1
	return 1 + strings.Count(sql[:off], "\n"), 1 + utf8.RuneCountInString(sql[start:off])
}

// maxQuoted bounds how much of the text an error message quotes.
const maxQuoted = 60

// Describe returns why the text was not parsed, with the position in the
// text as written where the parser stopped.
func (p *Parsed) Describe() string {
	var pe *parseError
	if !errors.As(p.Err, &pe) || pe.Cursorpos <= 0 {
		return shorten(p.Err.Error())
	}
	line, col := Position(p.SQL, p.ErrorOffset())
	return fmt.Sprintf("%s (line %d, column %d of the statement)", shorten(pe.Message), line, col)
}

// shorten cuts the quoted part of a parser message (syntax error at or
// near "…") to maxQuoted characters.
func shorten(msg string) string {
	i := strings.IndexByte(msg, '"')
	j := strings.LastIndexByte(msg, '"')
	if i < 0 || j <= i || utf8.RuneCountInString(msg[i+1:j]) <= maxQuoted {
		return msg
	}
	q := []rune(msg[i+1 : j])
	return msg[:i+1] + string(q[:maxQuoted]) + "…" + msg[j:]
}

// ErrorOffset returns the byte offset in the original text where the
// parser stopped or the budget ran out, or -1.
func (p *Parsed) ErrorOffset() int {
	var tc *TooComplexError
	if errors.As(p.Err, &tc) {
		return tc.Offset
	}
	var pe *parseError
	if !errors.As(p.Err, &pe) || pe.Cursorpos <= 0 {
		return -1
	}
	// The parser counts characters from 1; offsets are bytes.
	off := 0
	for n := 1; n < pe.Cursorpos && off < len(p.Src); n++ {
		_, size := utf8.DecodeRuneInString(p.Src[off:])
		off += size
	}
	return p.Orig(off)
}

// Dialect returns, for a text that does not parse, the reason it is likely
// written for another database ("? placeholders", "backquoted names"), or
// "".
func (p *Parsed) Dialect() string {
	if p.Err == nil {
		return ""
	}
	var tc *TooComplexError
	if errors.As(p.Err, &tc) {
		return ""
	}
	for _, t := range p.toks {
		s := p.Src[t.Start:t.End]
		switch {
		case t.Token == pg_query.Token_Op && strings.ContainsRune(s, '?'), t.Token == pg_query.Token_ASCII_63:
			return "? placeholders"
		case strings.HasPrefix(s, "`"):
			return "backquoted names"
		}
	}
	if p.toks == nil && strings.ContainsRune(p.SQL, '`') {
		return "backquoted names"
	}
	return ""
}

// Cache holds the parse of each text, so that a text that several calls
// send is parsed once.
type Cache map[string]*Parsed

// Parse returns the parse of sql, parsing it on first use.
func (c Cache) Parse(sql string) *Parsed {
	p, ok := c[sql]
	if !ok {
		p = Parse(sql)
		c[sql] = p
	}
	return p
}
