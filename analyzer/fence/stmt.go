package fence

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// names are the lease table and columns that the rule looks for, lower
// case, as PostgreSQL folds unquoted identifiers.
type names struct {
	leases  map[string]bool // the lease tables
	guarded map[string]bool // tables whose writes need a fence; nil: all but the lease tables
	holder  string
	epoch   string
	expiry  string

	epochKey map[string]bool // lease tables on which a unique key includes the epoch
}

// problem is one finding in a statement, at an offset of the original text.
type problem struct {
	msg string
	off int  // where in the text, or -1
	fix *fix // a mechanical edit of the text, or nil
}

// fix inserts text at an offset of the SQL text.
type fix struct {
	msg  string
	off  int
	text string
}

// statement is what the rule learned of one statement at one call.
type statement struct {
	problems []problem
	fenced   bool // a write to a guarded table that carries a fence
}

// clock kinds, by what the database clock they name reads.
type clockKind int

const (
	noClock    clockKind = iota
	txClock              // now(), CURRENT_TIMESTAMP: the transaction's start
	stmtClock            // statement_timestamp(): the statement's start
	wallClock            // clock_timestamp(): the moment it is evaluated
	paramClock           // a parameter: a time the process chose
)

// checkStmt checks one statement. first reports whether it is the first
// statement of its transaction, which decides whether now() is safe.
func (n *names) checkStmt(p *parsed, raw *pg_query.RawStmt, first bool) statement {
	var st statement
	node := raw.Stmt
	switch {
	case node.GetInsertStmt() != nil:
		s := node.GetInsertStmt()
		n.checkWrite(p, raw, &st, "INSERT into", s.Relation, s.WithClause, first, func(g *gate) {
			if sel := s.SelectStmt.GetSelectStmt(); sel != nil {
				g.sel(sel)
			}
		})
		if n.isLease(s.Relation) {
			n.checkLeaseInsert(p, &st, s)
		}
	case node.GetUpdateStmt() != nil:
		s := node.GetUpdateStmt()
		n.checkWrite(p, raw, &st, "UPDATE of", s.Relation, s.WithClause, first, func(g *gate) {
			g.fromWhere(s.FromClause, s.WhereClause, nil)
		})
		if n.isLease(s.Relation) {
			n.checkLeaseUpdate(p, &st, s)
		}
	case node.GetDeleteStmt() != nil:
		s := node.GetDeleteStmt()
		n.checkWrite(p, raw, &st, "DELETE from", s.Relation, s.WithClause, first, func(g *gate) {
			g.fromWhere(s.UsingClause, s.WhereClause, nil)
		})
		if n.isLease(s.Relation) {
			st.problems = append(st.problems, problem{off: p.orig(int(s.Relation.Location)),
				msg: fmt.Sprintf("DELETE from %s restarts the epoch and reuses fencing tokens: release by expiring the row instead", s.Relation.Relname)})
		}
	case node.GetMergeStmt() != nil:
		s := node.GetMergeStmt()
		n.checkWrite(p, raw, &st, "MERGE into", s.Relation, s.WithClause, first, func(g *gate) {
			g.fromWhere([]*pg_query.Node{s.SourceRelation}, s.JoinCondition, nil)
		})
	case node.GetTruncateStmt() != nil:
		for _, r := range node.GetTruncateStmt().Relations {
			if rv := r.GetRangeVar(); n.isLease(rv) {
				st.problems = append(st.problems, problem{off: p.orig(int(rv.Location)),
					msg: fmt.Sprintf("TRUNCATE of %s restarts the epoch and reuses fencing tokens: release by expiring the rows instead", rv.Relname)})
			}
		}
	}
	return st
}

func (n *names) isLease(rv *pg_query.RangeVar) bool {
	return rv != nil && n.leases[rv.Relname]
}

// needsFence reports whether a write to rv must carry a fence, and
// whether that is known (a table name built in at run time is not).
func (n *names) needsFence(rv *pg_query.RangeVar) (need, known bool) {
	if rv == nil || rv.Relname == placeholder {
		return false, false
	}
	if n.leases[rv.Relname] {
		return false, true
	}
	if n.guarded == nil {
		return true, true
	}
	return n.guarded[rv.Relname] || n.guarded[rv.Schemaname+"."+rv.Relname], true
}

// checkWrite checks that a write to a guarded table carries a complete
// fence under a row lock. gates adds to g the places where a read of the
// lease table decides whether the write happens.
func (n *names) checkWrite(p *parsed, raw *pg_query.RawStmt, st *statement, verb string, target *pg_query.RangeVar, with *pg_query.WithClause, first bool, gates func(*gate)) {
	need, known := n.needsFence(target)
	g := &gate{n: n, ctes: ctes(with), ends: p.lockEnds(raw)}
	gates(g)
	best := g.best()
	if !known && best == nil {
		return // the table is built in at run time: it may be the lease table
	}
	if !need && known {
		return
	}
	at := p.orig(int(target.Location))
	if best == nil {
		st.problems = append(st.problems, problem{off: at,
			msg: fmt.Sprintf("%s %s is not fenced: no EXISTS or join on %s tests holder, epoch and expiry, so a stale holder's write lands", verb, target.Relname, n.leaseList())})
		return
	}
	st.fenced = true
	if best.maybe {
		return // a part built in at run time may be what is missing
	}
	if missing := best.missing(n); missing != "" {
		st.problems = append(st.problems, problem{off: p.orig(best.loc),
			msg: fmt.Sprintf("fence does not test %s: a stale write passes it", missing)})
	}
	switch {
	case best.clock == paramClock:
		st.problems = append(st.problems, problem{off: p.orig(best.clockLoc),
			msg: fmt.Sprintf("fence tests %s against %s, a time the process chose: compare it with clock_timestamp()", n.expiry, p.spell(best.clockLoc, best.clockText))})
	case best.clock == txClock && !first:
		st.problems = append(st.problems, problem{off: p.orig(best.clockLoc),
			msg: fmt.Sprintf("fence tests %s against %s, the transaction's start time, after earlier statements in the transaction: it passes on a lease that has since expired; use clock_timestamp()", n.expiry, best.clockText)})
	}
	n.checkLock(p, st, best)
}

// checkLock checks that the fence's read of the lease row takes a lock
// that conflicts with the epoch-changing takeover.
func (n *names) checkLock(p *parsed, st *statement, f *fence) {
	strong := f.lock == pg_query.LockClauseStrength_LCS_FORSHARE ||
		f.lock == pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE ||
		f.lock == pg_query.LockClauseStrength_LCS_FORUPDATE
	keyShare := f.lock == pg_query.LockClauseStrength_LCS_FORKEYSHARE
	switch {
	case strong, keyShare && n.epochKey[f.table]:
		return
	case keyShare:
		st.problems = append(st.problems, problem{off: p.orig(f.loc),
			msg: fmt.Sprintf("fence takes FOR KEY SHARE, which a takeover does not wait for unless %s is a key column, and no unique key on %s includes it: use FOR SHARE, or add UNIQUE (name, %s)", n.epoch, f.table, n.epoch)})
		return
	}
	lock := "FOR SHARE"
	if n.epochKey[f.table] {
		lock = "FOR KEY SHARE"
	}
	pr := problem{off: p.orig(f.loc),
		msg: fmt.Sprintf("fence reads %s without a row lock: a takeover can commit between the check and this write's commit; add %s", f.table, lock)}
	if f.end >= 0 {
		pr.fix = &fix{msg: "Add " + lock + " to the fence", off: p.orig(f.end), text: " " + lock}
	}
	st.problems = append(st.problems, pr)
}

func (n *names) leaseList() string {
	var ls []string
	for l := range n.leases {
		ls = append(ls, l)
	}
	if len(ls) == 1 {
		return ls[0]
	}
	return "the lease table"
}

// checkLeaseUpdate checks an UPDATE of the lease table: expiry set from
// the database clock, and, in a renewal (an update that tests the holder),
// tested against it.
func (n *names) checkLeaseUpdate(p *parsed, st *statement, s *pg_query.UpdateStmt) {
	verb := "UPDATE of " + s.Relation.Relname
	sets := false
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == n.expiry {
			sets = true
			n.checkExpiryValue(p, st, verb, rt.Val, int(rt.Location))
		}
	}
	tests := newTests(n, s.Relation)
	tests.add(s.WhereClause)
	if tests.paramText != "" {
		st.problems = append(st.problems, problem{off: p.orig(tests.paramLoc),
			msg: fmt.Sprintf("%s tests %s against %s, a time the process chose: compare it with clock_timestamp()", verb, n.expiry, p.spell(tests.paramLoc, tests.paramText))})
		return
	}
	if sets && tests.holder && tests.clock == noClock && !tests.maybe {
		st.problems = append(st.problems, problem{off: p.orig(int(s.Relation.Location)),
			msg: fmt.Sprintf("renewal does not test %s > clock_timestamp(): it revives a lease that has expired", n.expiry)})
	}
}

// checkLeaseInsert checks that an INSERT into the lease table (a first
// acquisition) sets expiry from the database clock.
func (n *names) checkLeaseInsert(p *parsed, st *statement, s *pg_query.InsertStmt) {
	verb := "INSERT into " + s.Relation.Relname
	col := -1
	for i, c := range s.Cols {
		if rt := c.GetResTarget(); rt != nil && rt.Name == n.expiry {
			col = i
		}
	}
	if sel := s.SelectStmt.GetSelectStmt(); sel != nil && col >= 0 {
		for _, row := range sel.ValuesLists {
			if items := row.GetList().GetItems(); col < len(items) {
				n.checkExpiryValue(p, st, verb, items[col], -1)
			}
		}
	}
	if oc := s.OnConflictClause; oc != nil {
		for _, t := range oc.TargetList {
			if rt := t.GetResTarget(); rt != nil && rt.Name == n.expiry && !excluded(rt.Val) {
				n.checkExpiryValue(p, st, verb, rt.Val, int(rt.Location))
			}
		}
	}
}

// checkExpiryValue reports an expiry computed without the database clock.
func (n *names) checkExpiryValue(p *parsed, st *statement, verb string, val *pg_query.Node, loc int) {
	kind, text, at := clockIn(val)
	if kind == wallClock || kind == stmtClock || kind == txClock || hasPlaceholder(val) {
		return
	}
	if loc < 0 {
		loc = at
	}
	if kind == paramClock {
		st.problems = append(st.problems, problem{off: p.orig(loc),
			msg: fmt.Sprintf("%s sets %s from %s, a time the process chose: compute it from clock_timestamp()", verb, n.expiry, p.spell(at, text))})
		return
	}
	st.problems = append(st.problems, problem{off: p.orig(loc),
		msg: fmt.Sprintf("%s sets %s without the database clock: compute it from clock_timestamp()", verb, n.expiry)})
}

// excluded reports whether val is EXCLUDED.col, the value the INSERT
// proposed, which the INSERT's own check covers.
func excluded(val *pg_query.Node) bool {
	cr := val.GetColumnRef()
	return cr != nil && len(cr.Fields) == 2 && strings.EqualFold(cr.Fields[0].GetString_().GetSval(), "excluded")
}

// ctes returns the common table expressions of a WITH clause by name.
func ctes(with *pg_query.WithClause) map[string]*pg_query.SelectStmt {
	m := make(map[string]*pg_query.SelectStmt)
	if with == nil {
		return m
	}
	for _, c := range with.Ctes {
		if cte := c.GetCommonTableExpr(); cte != nil {
			if sel := cte.Ctequery.GetSelectStmt(); sel != nil {
				m[cte.Ctename] = sel
			}
		}
	}
	return m
}

// clockIn returns the strongest clock that expression e reads (a
// parameter counts only where no database clock is read), its text and
// offset in the rewritten text.
func clockIn(e *pg_query.Node) (kind clockKind, text string, loc int) {
	loc = -1
	param := false
	var ptext string
	var ploc int
	walk(e, func(x *pg_query.Node) bool {
		if x.GetSubLink() != nil {
			return false // a subquery's clock decides nothing here
		}
		k, t, l := clockOf(x)
		if k == paramClock {
			if !param {
				param, ptext, ploc = true, t, l
			}
		} else if k > kind {
			kind, text, loc = k, t, l
		}
		return true
	})
	if kind == noClock && param {
		return paramClock, ptext, ploc
	}
	return kind, text, loc
}

// clockOf classifies one node: a call of a database clock function, or a
// parameter.
func clockOf(x *pg_query.Node) (clockKind, string, int) {
	if pr := x.GetParamRef(); pr != nil {
		return paramClock, fmt.Sprintf("$%d", pr.Number), int(pr.Location)
	}
	if sv := x.GetSqlvalueFunction(); sv != nil {
		switch sv.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return txClock, "CURRENT_TIMESTAMP", int(sv.Location)
		case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return txClock, "LOCALTIMESTAMP", int(sv.Location)
		}
	}
	if fc := x.GetFuncCall(); fc != nil && len(fc.Args) == 0 {
		name := fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()
		switch name {
		case "clock_timestamp":
			return wallClock, name + "()", int(fc.Location)
		case "statement_timestamp":
			return stmtClock, name + "()", int(fc.Location)
		case "now", "transaction_timestamp":
			return txClock, name + "()", int(fc.Location)
		}
	}
	return noClock, "", -1
}

func hasPlaceholder(e *pg_query.Node) bool {
	found := false
	walk(e, func(x *pg_query.Node) bool {
		if cr := x.GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetString_().GetSval() == placeholder {
					found = true
				}
			}
		}
		if rv := x.GetRangeVar(); rv != nil && rv.Relname == placeholder {
			found = true
		}
		return !found
	})
	return found
}
