package pgsql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Walk calls f for every node below n, depth first, and does not descend
// into a node for which f returns false.
func Walk(n protoreflect.ProtoMessage, f func(*pg_query.Node) bool) {
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

// Conjuncts returns the terms of a chain of ANDs.
func Conjuncts(e *pg_query.Node) []*pg_query.Node {
	if e == nil {
		return nil
	}
	if b := e.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{e}
}

// LockEnds returns, for each subquery of raw that is a mechanical place for
// a locking clause (the subquery of an EXISTS, or of a WITH entry, with no
// grouping, DISTINCT, set operation or function call that a row lock would
// refuse), the offset in Src of its closing parenthesis.
func (p *Parsed) LockEnds(raw *pg_query.RawStmt) map[*pg_query.SelectStmt]int {
	ends := make(map[*pg_query.SelectStmt]int)
	closing := func(from int) int {
		depth := 0
		for _, t := range p.toks {
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
	Walk(raw, func(x *pg_query.Node) bool {
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
	if IsSetOp(sel) || len(sel.GroupClause) > 0 || len(sel.DistinctClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 {
		return false
	}
	calls := false
	for _, t := range sel.TargetList {
		Walk(t, func(x *pg_query.Node) bool {
			calls = calls || x.GetFuncCall() != nil
			return !calls
		})
	}
	return !calls
}

// IsSetOp reports whether sel is a UNION, INTERSECT or EXCEPT.
func IsSetOp(sel *pg_query.SelectStmt) bool {
	return sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED
}

// Ident returns the name parts of a column reference (l.holder), or nil
// when e is none or not a plain name (a * or an expression).
func Ident(e *pg_query.Node) []string {
	cr := e.GetColumnRef()
	if cr == nil {
		return nil
	}
	parts := make([]string, 0, len(cr.Fields))
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return nil
		}
		parts = append(parts, s.Sval)
	}
	return parts
}

// Identifier returns an SQL identifier written in a setting as PostgreSQL
// reads it: "Quoted" as written, anything else folded to lower case.
func Identifier(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}

// QualifiedName returns a table written in a setting, schema.table or
// table, with each part read as PostgreSQL reads it.
func QualifiedName(s string) string {
	// A dot inside quotes is part of the name.
	inQuotes := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			inQuotes = !inQuotes
		case s[i] == '.' && !inQuotes:
			return Identifier(s[:i]) + "." + Identifier(s[i+1:])
		}
	}
	return Identifier(s)
}

// RelationName returns the relation name that a table written in a
// setting matches: relations are matched by name, without their schema.
func RelationName(setting string) string {
	name := QualifiedName(setting)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// IsParam reports whether e is a parameter ($1), maybe cast.
func IsParam(e *pg_query.Node) bool {
	if tc := e.GetTypeCast(); tc != nil {
		e = tc.Arg
	}
	return e.GetParamRef() != nil
}

// IsNull reports whether e is the constant NULL.
func IsNull(e *pg_query.Node) bool {
	c := e.GetAConst()
	return c != nil && c.Isnull
}

// IsExcluded reports whether e is EXCLUDED.col, the value that an INSERT
// … ON CONFLICT proposed.
func IsExcluded(e *pg_query.Node) bool {
	parts := Ident(e)
	return len(parts) == 2 && strings.EqualFold(parts[0], "excluded")
}

// SessionOnly reports whether raw changes nothing but its own session:
// its settings (SET, RESET, DISCARD) or its temporary objects (CREATE and
// DROP of pg_temp.name, CREATE TEMP TABLE), which no other session sees
// and which go with the connection. Such a statement writes no row that
// a lease or a fenced write could depend on.
func SessionOnly(raw *pg_query.RawStmt) bool {
	s := raw.GetStmt()
	switch {
	case s.GetVariableSetStmt() != nil, s.GetDiscardStmt() != nil:
		return true
	case s.GetCreateFunctionStmt() != nil:
		return inTemp(s.GetCreateFunctionStmt().Funcname)
	case s.GetCompositeTypeStmt() != nil:
		return tempRelation(s.GetCompositeTypeStmt().Typevar)
	case s.GetDefineStmt() != nil:
		return inTemp(s.GetDefineStmt().Defnames)
	case s.GetCreateStmt() != nil:
		return tempRelation(s.GetCreateStmt().Relation)
	case s.GetDropStmt() != nil:
		objs := s.GetDropStmt().Objects
		for _, o := range objs {
			var name []*pg_query.Node
			switch {
			case o.GetList() != nil:
				name = o.GetList().Items
			case o.GetObjectWithArgs() != nil:
				name = o.GetObjectWithArgs().Objname
			case o.GetTypeName() != nil:
				name = o.GetTypeName().Names
			}
			if !inTemp(name) {
				return false
			}
		}
		return len(objs) > 0
	}
	return false
}

// inTemp reports whether a qualified name (a list of String nodes) is in
// the session's temporary schema.
func inTemp(name []*pg_query.Node) bool {
	return len(name) == 2 && name[0].GetString_().GetSval() == "pg_temp"
}

// tempRelation reports whether rv is a temporary relation: pg_temp.name,
// or created TEMP.
func tempRelation(rv *pg_query.RangeVar) bool {
	return rv != nil && (rv.Schemaname == "pg_temp" || rv.Relpersistence == "t")
}

// CTEs returns every common table expression of a statement by name,
// at any depth: a write in one WITH entry may read another.
func CTEs(raw *pg_query.RawStmt) map[string]*pg_query.SelectStmt {
	m := make(map[string]*pg_query.SelectStmt)
	Walk(raw, func(x *pg_query.Node) bool {
		if cte := x.GetCommonTableExpr(); cte != nil {
			if sel := cte.Ctequery.GetSelectStmt(); sel != nil {
				m[cte.Ctename] = sel
			}
		}
		return true
	})
	return m
}

// Picks returns the SELECTs of the table that s, an UPDATE, writes that
// choose its rows: a subquery that its condition compares its
// key with (WHERE id = (SELECT id FROM jobs WHERE … FOR UPDATE SKIP
// LOCKED), WHERE id IN (SELECT …)), or a common table expression in its
// FROM (WITH c AS (SELECT id FROM jobs WHERE …) UPDATE jobs … FROM c
// WHERE jobs.id = c.id). A claim tests the lease there. The SELECT reads
// the table alone, or first, joined with what tells about its rows
// (FROM leases l LEFT JOIN sessions s ON s.id = l.holder).
func Picks(s *pg_query.UpdateStmt, ctes map[string]*pg_query.SelectStmt) []*pg_query.SelectStmt {
	ofTable := func(sel *pg_query.SelectStmt) bool {
		rv := PickedFrom(sel)
		return rv != nil && rv.Relname == s.Relation.Relname && rv.Schemaname == s.Relation.Schemaname
	}
	var out []*pg_query.SelectStmt
	for _, c := range Conjuncts(s.WhereClause) {
		var sub *pg_query.SubLink
		if ae := c.GetAExpr(); ae != nil && ae.Kind == pg_query.A_Expr_Kind_AEXPR_OP && len(ae.Name) == 1 && ae.Name[0].GetString_().GetSval() == "=" {
			for _, side := range []*pg_query.Node{ae.Lexpr, ae.Rexpr} {
				if sl := side.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
					sub = sl
				}
			}
		} else if sl := c.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK {
			sub = sl
		}
		if sel := sub.GetSubselect().GetSelectStmt(); sub != nil && ofTable(sel) {
			out = append(out, sel)
		}
	}
	for _, from := range s.FromClause {
		if rv := from.GetRangeVar(); rv != nil && rv.Schemaname == "" {
			if sel := ctes[rv.Relname]; ofTable(sel) {
				out = append(out, sel)
			}
		}
	}
	return out
}

// PickedFrom returns the table that sel, a SELECT with one FROM item,
// chooses rows of: the item itself, or the left of a join (FROM leases l
// LEFT JOIN sessions s ON …), whose rows an inner or left join keeps;
// nil for any other SELECT.
func PickedFrom(sel *pg_query.SelectStmt) *pg_query.RangeVar {
	if sel == nil || IsSetOp(sel) || len(sel.FromClause) != 1 {
		return nil
	}
	from := sel.FromClause[0]
	for {
		j := from.GetJoinExpr()
		if j == nil {
			return from.GetRangeVar()
		}
		if j.Jointype != pg_query.JoinType_JOIN_INNER && j.Jointype != pg_query.JoinType_JOIN_LEFT {
			return nil
		}
		from = j.Larg
	}
}
