package fence

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// names is the lease schema that the rule looks for: the lease tables, the
// names of their columns, and what the package's SQL says of them. Names
// are as PostgreSQL reads them: unquoted identifiers folded to lower case.
type names struct {
	leases  map[string]bool // the lease tables
	guarded map[string]bool // tables whose writes need a fence: by setting, and from evidence
	holder  string
	epoch   string
	expiry  string

	epochKey     map[string]bool // lease tables on which a unique key includes the epoch
	epochCounted map[string]bool // lease tables whose epoch the package's SQL counts up (epoch = epoch + 1)
	keyed        map[string]bool // lease tables whose rows an acquisition takes by key (INSERT of the holder … ON CONFLICT): a deleted row comes back

	// display names a relation in a message: its name, or the Go
	// expression that chose it at run time.
	display func(relname string) string
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
	problems []problem // on the lease table: reported whatever the evidence
	writes   []*write
	lease    leaseKind
	renews   bool   // it extends the holder's own lease (an arm tests the holder)
	fence    *fence // a SELECT that reads the lease row as a fence does, or nil
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
	all := allCTEs(raw)
	ends := p.LockEnds(raw)
	newGate := func() *gate { return &gate{n: n, p: p, first: first, ctes: all, ends: ends} }
	if sel := raw.Stmt.GetSelectStmt(); sel != nil {
		g := newGate()
		g.sel(sel)
		if f := g.best(); f != nil && f.holder && f.epoch {
			st.fence = f
		}
	}
	// Every write, at the top or in a WITH (a data-modifying CTE).
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		switch {
		case x.GetInsertStmt() != nil:
			s := x.GetInsertStmt()
			n.addWrite(p, st, "INSERT into", s.Relation, insertSetsEpoch(s, n.epoch), newGate(), func(g *gate) {
				if sel := s.SelectStmt.GetSelectStmt(); sel != nil {
					g.sel(sel)
				}
			})
			if n.isLease(s.Relation) {
				n.checkLeaseInsert(p, st, s)
			}
		case x.GetUpdateStmt() != nil:
			s := x.GetUpdateStmt()
			n.addWrite(p, st, "UPDATE of", s.Relation, setsColumn(s.TargetList, n.epoch), newGate(), func(g *gate) {
				g.fromWhere(s.FromClause, s.WhereClause, nil)
			})
			if n.isLease(s.Relation) {
				n.checkLeaseUpdate(p, st, s)
			}
		case x.GetDeleteStmt() != nil:
			s := x.GetDeleteStmt()
			n.addWrite(p, st, "DELETE from", s.Relation, false, newGate(), func(g *gate) {
				g.fromWhere(s.UsingClause, s.WhereClause, nil)
			})
			n.checkLeaseDelete(p, st, "DELETE from", s.Relation)
		case x.GetMergeStmt() != nil:
			s := x.GetMergeStmt()
			sets := false
			for _, w := range s.MergeWhenClauses {
				mw := w.GetMergeWhenClause()
				sets = sets || setsColumn(mw.GetTargetList(), n.epoch)
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
	if missing := best.missing(n); missing != "" {
		out = append(out, problem{off: off(best.loc),
			msg: fmt.Sprintf("fence does not test %s: a stale write passes it", missing)})
	}
	switch {
	case best.clock == paramClock:
		out = append(out, problem{off: off(best.clockLoc),
			msg: fmt.Sprintf("fence tests %s against %s, a time the process chose: compare it with clock_timestamp()", n.expiry, best.p.Spell(best.clockLoc, best.clockText))})
	case best.clock == txClock && !best.first:
		out = append(out, problem{off: off(best.clockLoc),
			msg: fmt.Sprintf("fence tests %s against %s, the transaction's start time, after earlier statements in the transaction: it passes on a lease that has since expired; use clock_timestamp()", n.expiry, best.clockText)})
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
	switch {
	case strong, keyShare && n.epochKey[f.table]:
		return problem{}, false
	case keyShare:
		return problem{off: f.p.Orig(f.loc),
			msg: fmt.Sprintf("fence takes FOR KEY SHARE, which a takeover does not wait for unless %s is a key column, and no unique key on %s includes it: use FOR SHARE, or add UNIQUE (name, %s)", n.epoch, table, n.epoch)}, true
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

// checkLeaseDelete reports a DELETE or TRUNCATE of a lease table whose
// epoch the package counts up and whose rows it acquires by key (an
// INSERT of the holder … ON CONFLICT): the next acquisition of the same name starts the count again,
// and a stale holder's token becomes valid again. Without such a counter
// (no epoch, or one from the clock or a sequence), or where a row never
// comes back (a job queue's rows, keyed by a serial id), deleting a lease
// row is how some packages release, and is not reported.
func (n *names) checkLeaseDelete(p *pgsql.Parsed, st *statement, verb string, rv *pg_query.RangeVar) {
	if !n.isLease(rv) || !n.epochCounted[rv.Relname] || !n.keyed[rv.Relname] {
		return
	}
	st.problems = append(st.problems, problem{off: p.Orig(int(rv.Location)),
		msg: fmt.Sprintf("%s %s restarts the %s and reuses fencing tokens: release by expiring the row instead", verb, n.display(rv.Relname), n.epoch)})
}

// checkLeaseUpdate checks an UPDATE of the lease table: expiry set from
// the database clock, and, in a renewal (an update that tests the holder),
// tested against it. A release is none of this.
func (n *names) checkLeaseUpdate(p *pgsql.Parsed, st *statement, s *pg_query.UpdateStmt) {
	verb := "UPDATE of " + n.display(s.Relation.Relname)
	sets := false
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == n.expiry {
			sets = true
		}
	}
	if n.releases(s.TargetList) {
		st.lease = max(st.lease, release)
		return
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == n.epoch && n.copies(rt.Val, s.Relation, s.WhereClause) {
			return
		}
	}
	if sets {
		st.lease = renewal
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == n.expiry {
			n.checkExpiryValue(p, st, verb, rt.Val, int(rt.Location))
		}
	}
	if sets {
		n.checkRenewal(p, st, verb, s.Relation, s.WhereClause)
	}
}

// checkRenewal checks the condition of a statement that extends the lease
// on rel: it compares expiry with nothing but the database clock, and each
// of its arms that matches the holder's own row (a renewal) tests that the
// lease has not expired. An arm that matches any expired row (a takeover)
// needs no holder.
func (n *names) checkRenewal(p *pgsql.Parsed, st *statement, verb string, rel *pg_query.RangeVar, where *pg_query.Node) {
	for _, arm := range arms(where) {
		tests := newTests(n, rel)
		for _, c := range arm {
			tests.add(c)
		}
		// An arm that matches the holder's row, or any row whatever its
		// expiry (an extension only a holder sends), renews.
		st.renews = st.renews || tests.holder || tests.clock == noClock && tests.paramText == "" && !tests.maybe
		if tests.paramText != "" {
			st.problems = append(st.problems, problem{off: p.Orig(tests.paramLoc),
				msg: fmt.Sprintf("%s tests %s against %s, a time the process chose: compare it with clock_timestamp()", verb, n.expiry, p.Spell(tests.paramLoc, tests.paramText))})
			return
		}
		if tests.holder && tests.clock == noClock && !tests.maybe {
			st.problems = append(st.problems, problem{off: p.Orig(int(rel.Location)),
				msg: fmt.Sprintf("renewal does not test %s > clock_timestamp(): it revives a lease that has expired", n.expiry)})
			return
		}
	}
}

// arms returns the alternatives of a condition: its conjuncts, or, where
// one of them is an OR, the other conjuncts with each of its terms in turn
// (a = 1 AND (b OR c) has the arms a = 1 AND b and a = 1 AND c).
func arms(where *pg_query.Node) [][]*pg_query.Node {
	conj := pgsql.Conjuncts(where)
	for i, c := range conj {
		b := c.GetBoolExpr()
		if b == nil || b.Boolop != pg_query.BoolExprType_OR_EXPR {
			continue
		}
		rest := slices.Concat(conj[:i], conj[i+1:])
		var out [][]*pg_query.Node
		for _, d := range b.Args {
			for _, arm := range arms(d) {
				out = append(out, slices.Concat(rest, arm))
			}
		}
		return out
	}
	return [][]*pg_query.Node{conj}
}

// releases reports whether the assignments of an UPDATE end the lease
// rather than extend it: expiry set to NULL, to -infinity or to the
// database clock itself, or the holder cleared.
func (n *names) releases(targets []*pg_query.Node) bool {
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		v := rt.Val
		if tc := v.GetTypeCast(); tc != nil {
			v = tc.Arg
		}
		switch rt.Name {
		case n.expiry:
			if isNull(v) || isString(v, "-infinity") {
				return true
			}
			if k, _, _ := clockOf(v); k != noClock && k != paramClock {
				return true // the clock itself, no interval added
			}
		case n.holder:
			if isNull(v) || isString(v, "") {
				return true
			}
		}
	}
	return false
}

func isNull(v *pg_query.Node) bool {
	c := v.GetAConst()
	return c != nil && c.Isnull
}

func isString(v *pg_query.Node, s string) bool {
	c := v.GetAConst()
	return c != nil && c.GetSval() != nil && strings.EqualFold(c.GetSval().Sval, s)
}

// checkLeaseInsert checks that an INSERT into the lease table (a first
// acquisition) sets expiry from the database clock.
func (n *names) checkLeaseInsert(p *pgsql.Parsed, st *statement, s *pg_query.InsertStmt) {
	verb := "INSERT into " + n.display(s.Relation.Relname)
	col, epochCol := -1, -1
	for i, c := range s.Cols {
		switch c.GetResTarget().GetName() {
		case n.expiry:
			col = i
		case n.epoch:
			epochCol = i
		}
	}
	if s.OnConflictClause == nil && !setsColumn(s.Cols, n.holder) {
		return // a row that nobody holds (a queued message): no acquisition
	}
	sel := s.SelectStmt.GetSelectStmt()
	if s.OnConflictClause == nil && sel != nil && epochCol >= 0 {
		for _, row := range sel.ValuesLists {
			if items := row.GetList().GetItems(); epochCol < len(items) && n.copies(items[epochCol], s.Relation, nil) {
				return
			}
		}
	}
	if col >= 0 {
		st.lease = max(st.lease, acquired)
	}
	if sel != nil && col >= 0 {
		for _, row := range sel.ValuesLists {
			if items := row.GetList().GetItems(); col < len(items) {
				n.checkExpiryValue(p, st, verb, items[col], -1)
			}
		}
	}
	if oc := s.OnConflictClause; oc != nil {
		if oc.WhereClause != nil || oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING {
			st.lease = renewal // the row may not be taken: rows affected say whether it was
		}
		if n.releases(oc.TargetList) {
			return
		}
		for _, t := range oc.TargetList {
			if rt := t.GetResTarget(); rt != nil && rt.Name == n.expiry && !excluded(rt.Val) {
				n.checkExpiryValue(p, st, verb, rt.Val, int(rt.Location))
			}
		}
		if setsColumn(oc.TargetList, n.expiry) && oc.WhereClause != nil {
			n.checkRenewal(p, st, verb, s.Relation, oc.WhereClause)
		}
	}
}

// copies reports whether val, written to the epoch column of rel by a
// statement with condition where, is the epoch as the caller gave it,
// replacing one the statement does not test: a row copied in (a fixture,
// an import, a restore), not an acquisition, renewal or takeover, and the
// rule does not judge its expiry. A takeover that computes the next epoch
// in Go tests the one it replaces (WHERE epoch = $4); one in SQL adds to
// it.
func (n *names) copies(val *pg_query.Node, rel *pg_query.RangeVar, where *pg_query.Node) bool {
	if n.adds(val) {
		return false
	}
	param := false
	pgsql.Walk(val, func(x *pg_query.Node) bool {
		param = param || x.GetParamRef() != nil
		return !param
	})
	if !param {
		return false
	}
	t := newTests(n, rel)
	t.add(where)
	return !t.epoch
}

// checkExpiryValue reports an expiry computed without the database clock.
func (n *names) checkExpiryValue(p *pgsql.Parsed, st *statement, verb string, val *pg_query.Node, loc int) {
	kind, text, at := clockIn(val)
	if kind == wallClock || kind == stmtClock || kind == txClock || hasPlaceholder(val) {
		return
	}
	if loc < 0 {
		loc = at
	}
	if kind == paramClock {
		st.problems = append(st.problems, problem{off: p.Orig(loc),
			msg: fmt.Sprintf("%s sets %s from %s, a time the process chose: compute it from clock_timestamp()", verb, n.expiry, p.Spell(at, text))})
		return
	}
	if isNull(val) {
		return
	}
	st.problems = append(st.problems, problem{off: p.Orig(loc),
		msg: fmt.Sprintf("%s sets %s without the database clock: compute it from clock_timestamp()", verb, n.expiry)})
}

// setsColumn reports whether an UPDATE's or ON CONFLICT's assignments set
// col.
func setsColumn(targets []*pg_query.Node, col string) bool {
	for _, t := range targets {
		if t.GetResTarget().GetName() == col {
			return true
		}
	}
	return false
}

func insertSetsEpoch(s *pg_query.InsertStmt, epoch string) bool {
	if oc := s.OnConflictClause; oc != nil && setsColumn(oc.TargetList, epoch) {
		return true
	}
	return setsColumn(s.Cols, epoch)
}

// excluded reports whether val is EXCLUDED.col, the value the INSERT
// proposed, which the INSERT's own check covers.
func excluded(val *pg_query.Node) bool {
	parts := pgsql.Ident(val)
	return len(parts) == 2 && strings.EqualFold(parts[0], "excluded")
}

// allCTEs returns every common table expression of a statement by name,
// at any depth: a write in one WITH entry may read another.
func allCTEs(raw *pg_query.RawStmt) map[string]*pg_query.SelectStmt {
	m := make(map[string]*pg_query.SelectStmt)
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		if cte := x.GetCommonTableExpr(); cte != nil {
			if sel := cte.Ctequery.GetSelectStmt(); sel != nil {
				m[cte.Ctename] = sel
			}
		}
		return true
	})
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
