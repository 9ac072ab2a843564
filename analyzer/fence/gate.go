package fence

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// A fence is one read of the lease table that decides whether a write
// happens, and what it tests.
type fence struct {
	table string
	tests
	lock pg_query.LockClauseStrength // the strongest row lock it takes on the lease row
	// unknown reports that it reads a table named at run time that may
	// be the lease table: what it lacks is not said.
	unknown bool
	loc     int           // rewritten offset to report at
	end     int           // rewritten offset where a locking clause goes, or -1: not mechanical
	p       *pgsql.Parsed // the text it is in
	// first reports whether its statement may be the first of its
	// transaction, which decides whether now() is safe in it.
	first bool
}

// missing names the tests that f lacks, or "".
func (f *fence) missing(n *names) string {
	c := n.of(f.table)
	var m []string
	if !f.holder && c.holder != "" {
		m = append(m, "the holder ("+n.column(c.holder)+" = $n)")
	}
	if !f.epoch && c.epoch != "" {
		m = append(m, "the epoch ("+n.column(c.epoch)+" = $n)")
	}
	if f.clock == noClock && c.expiry != "" {
		m = append(m, "expiry against the database clock ("+n.column(c.expiry)+" > clock_timestamp())")
	}
	switch len(m) {
	case 0:
		return ""
	case 1:
		return m[0]
	}
	return strings.Join(m[:len(m)-1], ", ") + " or " + m[len(m)-1]
}

// score orders fences by how much of a fence they are.
func (f *fence) score() int {
	s := 0
	for _, ok := range []bool{f.holder, f.epoch, f.clock != noClock, f.lock != pg_query.LockClauseStrength_LOCK_CLAUSE_STRENGTH_UNDEFINED && f.lock != pg_query.LockClauseStrength_LCS_NONE} {
		if ok {
			s++
		}
	}
	return s
}

// gate collects the fences of one write: reads of the lease table in the
// places that decide whether the write happens. A read elsewhere (a scalar
// subquery in the values) decides nothing and is no fence.
type gate struct {
	n      *names
	p      *pgsql.Parsed
	first  bool // the statement may be the first of its transaction
	ctes   map[string]*pg_query.SelectStmt
	fences []*fence
	ends   map[*pg_query.SelectStmt]int // where a locking clause can be added (see lockEnds)
	seen   map[*pg_query.SelectStmt]bool
}

func (g *gate) best() *fence {
	var best *fence
	for _, f := range g.fences {
		if !f.holder && !f.epoch && f.clock == noClock && !f.maybe {
			continue // a read that tests nothing of the lease (a backfill's join) decides nothing
		}
		if best == nil || f.score() > best.score() {
			best = f
		}
	}
	return best
}

// sel adds the fences of a SELECT whose rows decide the write: the lease
// table in its FROM, and EXISTS tests in its WHERE. Its locking clause
// locks what it reads.
func (g *gate) sel(sel *pg_query.SelectStmt) {
	if sel == nil || g.seen[sel] {
		return
	}
	if g.seen == nil {
		g.seen = make(map[*pg_query.SelectStmt]bool)
	}
	g.seen[sel] = true
	if pgsql.IsSetOp(sel) {
		return // a UNION's arms each decide; not followed
	}
	g.fromWhere(sel.FromClause, sel.WhereClause, sel)
}

// fromWhere adds the fences of a FROM list and a WHERE clause. owner is
// the SELECT they belong to, whose locking clause applies, or nil (the
// FROM of an UPDATE, the USING of a DELETE or MERGE: no locking clause can
// go there).
func (g *gate) fromWhere(from []*pg_query.Node, where *pg_query.Node, owner *pg_query.SelectStmt) {
	var quals []*pg_query.Node
	var leases []*pg_query.RangeVar
	var visit func(item *pg_query.Node)
	visit = func(item *pg_query.Node) {
		switch {
		case item.GetRangeVar() != nil:
			rv := item.GetRangeVar()
			if g.n.leases[rv.Relname] || sqltext.IsPlaceholder(rv.Relname) {
				leases = append(leases, rv)
			} else if c := g.ctes[rv.Relname]; c != nil && rv.Schemaname == "" {
				g.sel(c)
			}
		case item.GetRangeSubselect() != nil:
			g.sel(item.GetRangeSubselect().Subquery.GetSelectStmt())
		case item.GetJoinExpr() != nil:
			j := item.GetJoinExpr()
			if j.Jointype != pg_query.JoinType_JOIN_INNER {
				return // an outer join keeps the row without the lease
			}
			quals = append(quals, j.Quals)
			visit(j.Larg)
			visit(j.Rarg)
		}
	}
	for _, item := range from {
		visit(item)
	}
	for _, c := range pgsql.Conjuncts(where) {
		if sl := c.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
			g.sel(sl.Subselect.GetSelectStmt())
		}
	}
	for _, rv := range leases {
		t := newTests(g.n, rv)
		t.add(where)
		for _, q := range quals {
			t.add(q)
		}
		f := &fence{table: rv.Relname, tests: *t, loc: int(rv.Location), end: -1, p: g.p, first: g.first}
		f.unknown = sqltext.IsPlaceholder(rv.Relname) && !g.n.leases[rv.Relname]
		if owner != nil {
			f.lock = lockOn(owner, rv)
			if e, ok := g.ends[owner]; ok {
				f.end = e
			}
		}
		g.fences = append(g.fences, f)
	}
}

// lockOn returns the strongest row lock that sel's locking clauses take
// on rv.
func lockOn(sel *pg_query.SelectStmt, rv *pg_query.RangeVar) pg_query.LockClauseStrength {
	name := rv.Relname
	if rv.Alias != nil {
		name = rv.Alias.Aliasname
	}
	strongest := pg_query.LockClauseStrength_LCS_NONE
	for _, lc := range sel.LockingClause {
		c := lc.GetLockingClause()
		if c == nil {
			continue
		}
		applies := len(c.LockedRels) == 0
		for _, r := range c.LockedRels {
			if r.GetRangeVar().GetRelname() == name {
				applies = true
			}
		}
		if applies && c.Strength > strongest {
			strongest = c.Strength
		}
	}
	return strongest
}

// tests are what a WHERE clause tests of a lease row.
type tests struct {
	c      columns         // the lease table's column names
	names  map[string]bool // how the row is named in the query: its table, or its alias
	holder bool            // holder = something
	epoch  bool            // epoch = a parameter
	clock  clockKind       // what expiry is tested against
	maybe  bool            // a test compares with a part built in at run time
	picks  bool            // a column = a parameter (or = ANY of one): rows the caller names
	lapsed bool            // expiry < a clock: rows whose lease has passed

	clockText string
	clockLoc  int

	// An ordering comparison of expiry with a parameter and no database
	// clock, either way round (a takeover's expires_at <= $3).
	paramText string
	paramLoc  int
}

func newTests(n *names, rv *pg_query.RangeVar) *tests {
	t := &tests{c: n.of(rv.Relname), names: map[string]bool{rv.Relname: true}, clockLoc: -1}
	if rv.Alias != nil {
		t.names = map[string]bool{rv.Alias.Aliasname: true}
	}
	return t
}

// add records the tests of the conjuncts of where.
func (t *tests) add(where *pg_query.Node) {
	for _, c := range pgsql.Conjuncts(where) {
		if sl := c.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && paramsOnly(sl.Subselect) {
			// (job_id, lock_id) IN (SELECT unnest($1), unnest($2)):
			// the rows the caller names, as with id = ANY($1).
			cols := []*pg_query.Node{sl.Testexpr}
			if row := sl.Testexpr.GetRowExpr(); row != nil {
				cols = row.Args
			}
			for _, col := range cols {
				if _, ok := t.column(col); ok {
					t.picks = true
				}
			}
			continue
		}
		ae := c.GetAExpr()
		if ae == nil || len(ae.Name) != 1 {
			continue
		}
		op := ae.Name[0].GetString_().GetSval()
		switch ae.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			t.compare(op, ae.Lexpr, ae.Rexpr)
			t.compare(mirror(op), ae.Rexpr, ae.Lexpr)
		case pg_query.A_Expr_Kind_AEXPR_OP_ANY:
			// holder = ANY($1): the row is one of those the caller
			// names, as with holder = $1.
			if op == "=" && pgsql.IsParam(ae.Rexpr) {
				t.compare(op, ae.Lexpr, ae.Rexpr)
			}
		}
	}
}

// compare records what col op other tests, when col is a column of the
// lease row.
func (t *tests) compare(op string, col, other *pg_query.Node) {
	name, ok := t.column(col)
	if !ok {
		return
	}
	if hasPlaceholder(other) {
		t.maybe = true
		return
	}
	t.picks = t.picks || op == "=" && pgsql.IsParam(other)
	switch {
	case name == "":
	case name == t.c.holder && op == "=":
		t.holder = t.holder || !isColumn(other)
	case name == t.c.epoch && op == "=":
		t.epoch = t.epoch || pgsql.IsParam(other)
	case name == t.c.expiry && (op == ">" || op == ">=" || op == "<" || op == "<="):
		kind, text, loc := clockIn(other)
		if kind == paramClock && t.paramText == "" {
			t.paramText, t.paramLoc = text, loc
		}
		if (op == ">" || op == ">=") && kind > t.clock && (t.clock == noClock || kind != paramClock) {
			t.clock, t.clockText, t.clockLoc = kind, text, loc
		}
		t.lapsed = t.lapsed || (op == "<" || op == "<=") && kind != noClock
	}
}

// column returns the name of the lease row's column that e is, if it is
// one: unqualified, or qualified by the row's table or alias.
func (t *tests) column(e *pg_query.Node) (string, bool) {
	switch parts := pgsql.Ident(e); len(parts) {
	case 1:
		return parts[0], true
	case 2:
		return parts[1], t.names[parts[0]]
	}
	return "", false
}

func isColumn(e *pg_query.Node) bool { return e.GetColumnRef() != nil }

// paramsOnly reports whether sub is a SELECT of parameters and nothing
// else (SELECT unnest($1::bigint[]), unnest($2::text[])): no FROM, no
// condition, each column a parameter, or unnest of one, maybe cast.
func paramsOnly(sub *pg_query.Node) bool {
	sel := sub.GetSelectStmt()
	if sel == nil || len(sel.FromClause) > 0 || sel.WhereClause != nil || len(sel.TargetList) == 0 {
		return false
	}
	for _, t := range sel.TargetList {
		v := t.GetResTarget().GetVal()
		if fc := v.GetFuncCall(); fc != nil && len(fc.Funcname) > 0 && fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval() == "unnest" && len(fc.Args) == 1 {
			v = fc.Args[0]
		}
		for v.GetTypeCast() != nil {
			v = v.GetTypeCast().Arg
		}
		if !pgsql.IsParam(v) {
			return false
		}
	}
	return true
}

// mirror returns the operator with its operands swapped: a < b is b > a.
func mirror(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}
