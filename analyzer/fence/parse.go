package fence

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// parsed is one SQL text as PostgreSQL's own parser reads it.
type parsed struct {
	stmts []*pg_query.RawStmt
	err   error  // the parser's error; stmts is nil then
	sql   string // the text as written
	src   string // the text the parser read

	// The parser reads the text with pgx named arguments (@name) turned
	// into positional parameters; shifts map its offsets back.
	shifts []shift
}

// shift records that, from rewritten offset at on, offsets in the
// original text are delta further on.
type shift struct{ at, delta int }

// orig returns the offset in the original text of rewritten offset off.
func (p *parsed) orig(off int) int {
	d := 0
	for _, s := range p.shifts {
		if off < s.at {
			break
		}
		d = s.delta
	}
	return off + d
}

// parse parses sql with the PostgreSQL parser, pgx named arguments
// understood as parameters rather than as the prefix operator @.
func parse(sql string) *parsed {
	src, shifts := namedArgs(sql)
	tree, err := pg_query.Parse(src)
	if err != nil {
		return &parsed{err: err, sql: sql, src: src, shifts: shifts}
	}
	return &parsed{stmts: tree.Stmts, sql: sql, src: src, shifts: shifts}
}

// namedArgs rewrites pgx named arguments (@name, as pgx.NamedArgs binds
// them) into positional parameters, one number per name, as pgx does. It
// reads the text with PostgreSQL's own scanner, so an @ in a string
// literal, a quoted identifier or a comment is left alone, and so is @
// followed by white space (the absolute-value operator).
func namedArgs(sql string) (string, []shift) {
	if !strings.Contains(sql, "@") {
		return sql, nil
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return sql, nil // the parser will say what is wrong
	}
	var b strings.Builder
	var shifts []shift
	numbers := make(map[string]int)
	last, delta := 0, 0
	toks := scan.Tokens
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
	b.WriteString(sql[last:])
	return b.String(), shifts
}

// spell returns a parameter as written at rewritten offset loc ($3, or
// @name for a pgx named argument), or fallback.
func (p *parsed) spell(loc int, fallback string) string {
	o := p.orig(loc)
	if o < 0 || o >= len(p.sql) || (p.sql[o] != '@' && p.sql[o] != '$') {
		return fallback
	}
	end := o + 1
	for end < len(p.sql) && (p.sql[end] == '_' || unicode.IsLetter(rune(p.sql[end])) || unicode.IsDigit(rune(p.sql[end]))) {
		end++
	}
	return p.sql[o:end]
}

// position returns the line and column (1-based, in bytes) of offset off
// in sql.
func position(sql string, off int) (line, col int) {
	off = min(max(off, 0), len(sql))
	line = 1 + strings.Count(sql[:off], "\n")
	return line, off - strings.LastIndexByte(sql[:off], '\n')
}

// describe returns the parser's error with its position in sql.
func (p *parsed) describe(sql string) string {
	var pe *parser.Error
	if !errors.As(p.err, &pe) || pe.Cursorpos <= 0 {
		return p.err.Error()
	}
	line, col := position(sql, p.orig(pe.Cursorpos-1))
	return fmt.Sprintf("%s (line %d, column %d of the statement)", pe.Message, line, col)
}

// errorOffset returns the offset in the original text where the parser
// stopped, or -1.
func (p *parsed) errorOffset() int {
	var pe *parser.Error
	if !errors.As(p.err, &pe) || pe.Cursorpos <= 0 {
		return -1
	}
	return p.orig(pe.Cursorpos - 1)
}

// walk calls f for every node below n, depth first, and does not descend
// into a node for which f returns false.
func walk(n protoreflect.ProtoMessage, f func(*pg_query.Node) bool) {
	if n == nil {
		return
	}
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if !m.IsValid() {
			return
		}
		if node, ok := m.Interface().(*pg_query.Node); ok && !f(node) {
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil || fd.IsMap():
			case fd.IsList():
				for i, l := 0, v.List(); i < l.Len(); i++ {
					visit(l.Get(i).Message())
				}
			default:
				visit(v.Message())
			}
			return true
		})
	}
	visit(n.ProtoReflect())
}

// lockEnds returns, for each subquery of raw that is a mechanical place
// for a locking clause (the subquery of an EXISTS, or of a WITH entry,
// with no grouping, DISTINCT, set operation or function call that a row
// lock would refuse), the rewritten offset of its closing parenthesis.
func (p *parsed) lockEnds(raw *pg_query.RawStmt) map[*pg_query.SelectStmt]int {
	ends := make(map[*pg_query.SelectStmt]int)
	var toks []*pg_query.ScanToken
	closing := func(from int) int {
		if toks == nil {
			scan, err := pg_query.Scan(p.src)
			if err != nil {
				return -1
			}
			toks = scan.Tokens
		}
		depth := 0
		for _, t := range toks {
			if int(t.Start) < from {
				continue
			}
			switch t.Token {
			case pg_query.Token_ASCII_40:
				depth++
			case pg_query.Token_ASCII_41:
				depth--
				if depth == 0 {
					return int(t.Start)
				}
			}
		}
		return -1
	}
	walk(raw, func(x *pg_query.Node) bool {
		var sel *pg_query.SelectStmt
		loc := -1
		if sl := x.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
			sel, loc = sl.Subselect.GetSelectStmt(), int(sl.Location)
		} else if cte := x.GetCommonTableExpr(); cte != nil {
			sel, loc = cte.Ctequery.GetSelectStmt(), int(cte.Location)
		}
		if sel != nil && lockable(sel) {
			if end := closing(loc); end >= 0 {
				ends[sel] = end
			}
		}
		return true
	})
	return ends
}

// lockable reports whether a row lock may be added to sel as it is.
func lockable(sel *pg_query.SelectStmt) bool {
	if (sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED) ||
		len(sel.GroupClause) > 0 || len(sel.DistinctClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 {
		return false
	}
	calls := false
	for _, t := range sel.TargetList {
		walk(t, func(x *pg_query.Node) bool {
			calls = calls || x.GetFuncCall() != nil
			return !calls
		})
	}
	return !calls
}
