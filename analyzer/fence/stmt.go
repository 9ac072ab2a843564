package fence

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// names is the lease schema that the rule looks for: the lease tables, the
// names of their columns, and what the package's SQL says of them. Names
// are as PostgreSQL reads them: unquoted identifiers folded to lower case.
type names struct {
	leases  map[string]bool    // the lease tables
	guarded map[string]bool    // tables whose writes need a fence: by setting, and from evidence
	def     columns            // the column names by setting, else the defaults
	cols    map[string]columns // a lease table's own column names, where they differ from def
	// fallback reports that no lease table was found: the default one
	// stands in, and no statement names it.
	fallback bool

	epochKey     map[string]bool     // lease tables on which a unique key includes the epoch
	epochCounted map[string]bool     // lease tables whose epoch the package's SQL counts up (epoch = epoch + 1)
	keyed        map[string]bool     // lease tables whose rows an acquisition takes by key (INSERT of the holder … ON CONFLICT): a deleted row comes back
	queued       map[string]bool     // lease tables whose rows the package inserts unclaimed (no holder, no conflict to settle): a queue's work items
	renewedBy    map[string][]string // lease tables whose renewal names its rows by these columns (see leaseschema.Table.RenewedBy)

	// display names a relation in a message: its name, or the Go
	// expression that chose it at run time.
	display func(relname string) string
	// column names a column in a message: its name, or the Go
	// expression that chose it at run time (see checker.displayColumn).
	column func(col string) string
}

// columns are the names of a lease table's columns; "" where the table
// has no such column. heartbeat reports that expiry holds when the lease
// was last renewed, not when it ends (see leaseschema): a renewal sets it
// to the clock itself.
type columns struct {
	holder, epoch, expiry string
	heartbeat             bool
}

// of returns the columns of the lease table rel.
func (n *names) of(rel string) columns {
	if c, ok := n.cols[rel]; ok {
		return c
	}
	return n.def
}

// carriesEpoch reports whether a write to another table that sets col to
// val carries the fencing token: col is the epoch column by its setting's
// or the default name, whatever val is; or the epoch column that a lease
// table's statements show, set from a parameter (a name such as version
// or attempt is counted up by many tables of their own: only the token
// handed in from outside is the lease's).
func (n *names) carriesEpoch(col string, val *pg_query.Node) bool {
	if col == "" {
		return false
	}
	if col == n.def.epoch {
		return true
	}
	for _, c := range n.cols {
		if c.epoch == col && val != nil && pgsql.IsParam(val) {
			return true
		}
	}
	return false
}

// setsEpoch reports whether the assignments of an UPDATE, ON CONFLICT or
// MERGE arm carry the fencing token (see carriesEpoch).
func (n *names) setsEpoch(targets []*pg_query.Node) bool {
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt != nil && n.carriesEpoch(rt.Name, rt.Val) {
			return true
		}
	}
	return false
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

// leaseKind is what a statement does to the lease table.
type leaseKind int

const (
	noLease  leaseKind = iota
	renewal            // sets expiry to a later time: a renewal, a takeover or an acquisition that may match no row
	release            // clears or ends the lease: expiry set to NULL, -infinity or the clock itself, or the holder cleared
	acquired           // an INSERT that always affects its row
)

// write is one write of a statement, top level or in a WITH, to a table
// that is not a lease table.
type write struct {
	verb      string // "INSERT into"
	target    *pg_query.RangeVar
	best      *fence // the fence that gates it, or nil
	setsEpoch bool   // it writes the epoch column: it carries the fencing token
	p         *pgsql.Parsed
}

// statement is what the rule learned of one statement at one call.
type statement struct {
	problems  []problem // on the lease table: reported whatever the evidence
	writes    []*write
	lease     leaseKind
	renews    bool   // it extends the holder's own lease (an arm tests the holder)
	completes bool   // the holder completes a queue's item (see checkCompletion)
	fence     *fence // a SELECT that reads the lease row as a fence does, or nil
	// locksLease reports a SELECT that locks rows of a lease table (FOR
	// SHARE, FOR UPDATE), whatever it tests: its caller may compare what
	// it reads (see checker.locksLeaseRows).
	locksLease bool
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

// checkStmt reads one statement. first reports whether it is the first
// statement of its transaction, which decides whether now() is safe.
func (n *names) checkStmt(p *pgsql.Parsed, raw *pg_query.RawStmt, first bool) *statement {
	st := &statement{}
	all := pgsql.CTEs(raw)
	ends := p.LockEnds(raw)
	newGate := func() *gate { return &gate{n: n, p: p, first: first, ctes: all, ends: ends} }
	if sel := raw.Stmt.GetSelectStmt(); sel != nil {
		g := newGate()
		g.sel(sel)
		// A fence whose verdict is a column of its answer: SELECT
		// EXISTS (SELECT 1 FROM leases WHERE … FOR KEY SHARE), which the
		// caller reads.
		for _, t := range sel.TargetList {
			if sl := t.GetResTarget().GetVal().GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
				g.sel(sl.Subselect.GetSelectStmt())
			}
		}
		if f := g.best(); f != nil && f.holder && f.epoch {
			st.fence = f
		}
		st.locksLease = n.locksLease(sel)
	}
	// Every write, at the top or in a WITH (a data-modifying CTE).
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		switch {
		case x.GetInsertStmt() != nil:
			s := x.GetInsertStmt()
			n.addWrite(p, st, "INSERT into", s.Relation, n.insertSetsEpoch(s), newGate(), func(g *gate) {
				if sel := s.SelectStmt.GetSelectStmt(); sel != nil {
					g.sel(sel)
				}
			})
			if n.isLease(s.Relation) {
				n.checkLeaseInsert(p, st, s)
			}
		case x.GetUpdateStmt() != nil:
			s := x.GetUpdateStmt()
			n.addWrite(p, st, "UPDATE of", s.Relation, n.setsEpoch(s.TargetList), newGate(), func(g *gate) {
				g.fromWhere(s.FromClause, s.WhereClause, nil)
			})
			if n.isLease(s.Relation) {
				n.checkLeaseUpdate(p, st, s, all)
				n.checkCompletion(st, s.Relation, s.TargetList, s.WhereClause)
			}
		case x.GetDeleteStmt() != nil:
			s := x.GetDeleteStmt()
			n.addWrite(p, st, "DELETE from", s.Relation, false, newGate(), func(g *gate) {
				g.fromWhere(s.UsingClause, s.WhereClause, nil)
			})
			n.checkLeaseDelete(p, st, "DELETE from", s.Relation)
			n.checkLapsedDelete(p, st, s)
			n.checkCompletion(st, s.Relation, nil, s.WhereClause)
		case x.GetMergeStmt() != nil:
			s := x.GetMergeStmt()
			sets := false
			for _, w := range s.MergeWhenClauses {
				mw := w.GetMergeWhenClause()
				sets = sets || n.setsEpoch(mw.GetTargetList())
				if mw.GetCommandType() == pg_query.CmdType_CMD_DELETE {
					n.checkLeaseDelete(p, st, "MERGE … DELETE from", s.Relation)
				}
			}
			n.addWrite(p, st, "MERGE into", s.Relation, sets, newGate(), func(g *gate) {
				g.fromWhere([]*pg_query.Node{s.SourceRelation}, s.JoinCondition, nil)
				for _, w := range s.MergeWhenClauses {
					g.fromWhere(nil, w.GetMergeWhenClause().GetCondition(), nil)
				}
			})
		case x.GetTruncateStmt() != nil:
			for _, r := range x.GetTruncateStmt().Relations {
				n.checkLeaseDelete(p, st, "TRUNCATE of", r.GetRangeVar())
			}
		}
		return true
	})
	return st
}

func (n *names) isLease(rv *pg_query.RangeVar) bool {
	return rv != nil && n.leases[rv.Relname]
}

// locksLease reports whether sel, a SELECT, locks rows of a lease table
// that its FROM names: FOR SHARE, FOR UPDATE, or a stronger or weaker
// lock, of all its tables or of that one.
func (n *names) locksLease(sel *pg_query.SelectStmt) bool {
	// The tables whose rows the SELECT returns and so may lock: those of
	// its FROM, and of an inner join, or the left of a left join (FROM
	// leases l LEFT JOIN sessions s ON …, whose sessions' side FOR UPDATE
	// cannot lock).
	var tables []*pg_query.RangeVar
	var visit func(item *pg_query.Node)
	visit = func(item *pg_query.Node) {
		if rv := item.GetRangeVar(); rv != nil {
			tables = append(tables, rv)
		} else if j := item.GetJoinExpr(); j != nil {
			switch j.Jointype {
			case pg_query.JoinType_JOIN_INNER:
				visit(j.Larg)
				visit(j.Rarg)
			case pg_query.JoinType_JOIN_LEFT:
				visit(j.Larg)
			}
		}
	}
	for _, from := range sel.FromClause {
		visit(from)
	}
	for _, lc := range sel.LockingClause {
		rels := lc.GetLockingClause().GetLockedRels()
		for _, rv := range tables {
			if !n.isLease(rv) {
				continue
			}
			if len(rels) == 0 {
				return true
			}
			for _, r := range rels {
				if l := r.GetRangeVar(); l != nil && (l.Relname == rv.Relname || rv.Alias != nil && l.Relname == rv.Alias.Aliasname) {
					return true
				}
			}
		}
	}
	return false
}

// addWrite records a write to target, not a lease table, with the fence
// that gates adds to g.
func (n *names) addWrite(p *pgsql.Parsed, st *statement, verb string, target *pg_query.RangeVar, setsEpoch bool, g *gate, gates func(*gate)) {
	if target == nil || n.isLease(target) {
		return
	}
	gates(g)
	st.writes = append(st.writes, &write{verb: verb, target: target, best: g.best(), setsEpoch: setsEpoch, p: p})
}

// guards reports whether writes to rv need a fence: the table is named by
// setting, or the package's SQL gives evidence (see checker.learnGuarded).
func (n *names) guards(rv *pg_query.RangeVar) bool {
	return n.guarded[rv.Relname] || (rv.Schemaname != "" && n.guarded[rv.Schemaname+"."+rv.Relname])
}

// checkWrite checks a write to a guarded table: it carries a complete
// fence under a row lock. A fence taken earlier in the transaction is in
// another text: its problems are reported at the write, without a place in
// the write's SQL.
func (n *names) checkWrite(w *write) []problem {
	at := w.p.Orig(int(w.target.Location))
	best := w.best
	if best == nil {
		return []problem{{off: at,
			msg: fmt.Sprintf("%s %s is not fenced: no EXISTS or join on %s tests holder, epoch and expiry, so a stale holder's write lands", w.verb, n.display(w.target.Relname), n.leaseList())}}
	}
	if best.maybe || best.unknown {
		return nil // a part built in at run time may be what is missing
	}
	off := func(loc int) int {
		if best.p != w.p {
			return -1
		}
		return best.p.Orig(loc)
	}
	var out []problem
	expiry := n.of(best.table).expiry
	if missing := best.missing(n); missing != "" {
		out = append(out, problem{off: off(best.loc),
			msg: fmt.Sprintf("fence does not test %s: a stale write passes it", missing)})
	}
	switch {
	case best.clock == paramClock:
		out = append(out, problem{off: off(best.clockLoc),
			msg: n.processTime("fence", best.table, best.p.Spell(best.clockLoc, best.clockText))})
	case best.clock == txClock && !best.first:
		out = append(out, problem{off: off(best.clockLoc),
			msg: fmt.Sprintf("fence tests %s against %s, the transaction's start time, after earlier statements in the transaction: it passes on a lease that has since expired; use clock_timestamp()", n.column(expiry), best.clockText)})
	}
	if pr, ok := n.checkLock(best); ok {
		pr.off = off(best.loc)
		if best.p != w.p {
			pr.fix = nil
		}
		out = append(out, pr)
	}
	return out
}

// checkLock checks that the fence's read of the lease row takes a lock
// that conflicts with the epoch-changing takeover.
func (n *names) checkLock(f *fence) (problem, bool) {
	strong := f.lock == pg_query.LockClauseStrength_LCS_FORSHARE ||
		f.lock == pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE ||
		f.lock == pg_query.LockClauseStrength_LCS_FORUPDATE
	keyShare := f.lock == pg_query.LockClauseStrength_LCS_FORKEYSHARE
	table := n.display(f.table)
	epoch := n.column(n.of(f.table).epoch)
	switch {
	case strong, keyShare && n.epochKey[f.table]:
		return problem{}, false
	case keyShare:
		return problem{off: f.p.Orig(f.loc),
			msg: fmt.Sprintf("fence takes FOR KEY SHARE, which a takeover does not wait for unless %s is a key column, and no unique key on %s includes it: use FOR SHARE, or add UNIQUE (name, %s)", epoch, table, epoch)}, true
	}
	lock := "FOR SHARE"
	if n.epochKey[f.table] {
		lock = "FOR KEY SHARE"
	}
	pr := problem{off: f.p.Orig(f.loc),
		msg: fmt.Sprintf("fence reads %s without a row lock: a takeover can commit between the check and this write's commit; add %s", table, lock)}
	if f.end >= 0 {
		pr.fix = &fix{msg: "Add " + lock + " to the fence", off: f.p.Orig(f.end), text: " " + lock}
	}
	return pr, true
}

// leaseList names the lease table for a message, when there is one name
// to give.
func (n *names) leaseList() string {
	var ls []string
	for l := range n.leases {
		ls = append(ls, l)
	}
	if len(ls) == 1 {
		return n.display(ls[0])
	}
	return "the lease table"
}

// clockIn returns the strongest clock that expression e reads (a
// parameter counts only where no database clock is read), its text and
// offset in the rewritten text.
func clockIn(e *pg_query.Node) (kind clockKind, text string, loc int) {
	loc = -1
	param := false
	var ptext string
	var ploc int
	pgsql.Walk(e, func(x *pg_query.Node) bool {
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
	pgsql.Walk(e, func(x *pg_query.Node) bool {
		for _, part := range pgsql.Ident(x) {
			found = found || sqltext.IsPlaceholder(part)
		}
		if rv := x.GetRangeVar(); rv != nil && sqltext.IsPlaceholder(rv.Relname) {
			found = true
		}
		return !found
	})
	return found
}
