package fence

// This file checks the statements on a lease table itself: renewals and
// takeovers (UPDATE), acquisitions (INSERT … ON CONFLICT), releases and
// deletes, and the expiry each sets.

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

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
		msg: fmt.Sprintf("%s %s restarts the %s and reuses fencing tokens: release by expiring the row instead", verb, n.display(rv.Relname), n.column(n.of(rv.Relname).epoch))})
}

// checkLapsedDelete reports a DELETE of the lease rows whose expiry has
// passed (a takeover by deletion: the next INSERT acquires the name) that
// judges the lapse by a time the process chose (DELETE FROM leases WHERE
// exp < $1): a process whose clock runs ahead deletes a lease that its
// holder still holds.
func (n *names) checkLapsedDelete(p *pgsql.Parsed, st *statement, s *pg_query.DeleteStmt) {
	if !n.isLease(s.Relation) {
		return
	}
	tests := newTests(n, s.Relation)
	tests.add(s.WhereClause)
	if tests.lapsed && tests.paramText != "" {
		st.problems = append(st.problems, problem{off: p.Orig(tests.paramLoc),
			msg: n.processTime("DELETE from "+n.display(s.Relation.Relname), s.Relation.Relname, p.Spell(tests.paramLoc, tests.paramText))})
	}
}

// processTime is the message for a statement (verb: "UPDATE of jobs",
// "fence") that tests the expiry of rel, a lease table, against a time
// the process chose (spelled as the Go code wrote it).
func (n *names) processTime(verb, rel, spelled string) string {
	c := n.of(rel)
	db := "clock_timestamp()"
	if c.heartbeat {
		db = "clock_timestamp() minus the lease's interval"
	}
	return fmt.Sprintf("%s tests %s against %s, a time the process chose: compare it with %s", verb, n.column(c.expiry), spelled, db)
}

// checkCompletion marks a write to a queue's row (see names.queued) that
// tests the holder (claimed_by = $2) and neither extends nor ends the
// claim (a DELETE, or an UPDATE of other columns: the item done) as the
// holder's completion of the work it claimed. If the claim was lost and
// the item claimed again by another holder, the completion matches no row
// and returns no error: its rows affected are the only verdict, and the
// caller that does not compare them counts the work done while another
// holder runs it. Deleting a lease row that its own INSERT acquired (a
// lock table's release) is no completion: that table is no queue.
func (n *names) checkCompletion(st *statement, rel *pg_query.RangeVar, targets []*pg_query.Node, where *pg_query.Node) {
	if !n.isLease(rel) || !n.queued[rel.Relname] {
		return
	}
	c := n.of(rel.Relname)
	if setsColumn(targets, c.expiry) || setsColumn(targets, c.holder) || setsColumn(targets, c.epoch) || releases(c, targets) {
		return
	}
	tests := newTests(n, rel)
	tests.add(where)
	st.completes = st.completes || tests.holder
}

// checkLeaseUpdate checks an UPDATE of the lease table: expiry set from
// the database clock, and, in a renewal (an update that tests the holder),
// tested against it. A release is none of this. ctes are the statement's
// common table expressions, by name.
func (n *names) checkLeaseUpdate(p *pgsql.Parsed, st *statement, s *pg_query.UpdateStmt, ctes map[string]*pg_query.SelectStmt) {
	verb := "UPDATE of " + n.display(s.Relation.Relname)
	c := n.of(s.Relation.Relname)
	sets := setsColumn(s.TargetList, c.expiry)
	if releases(c, s.TargetList) {
		st.lease = max(st.lease, release)
		return
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == c.epoch && n.copies(rt.Val, s.Relation, s.WhereClause) {
			return
		}
	}
	if sets {
		st.lease = renewal
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == c.expiry {
			n.checkExpiryValue(p, st, verb, c.expiry, rt.Val, int(rt.Location))
		}
	}
	if sets {
		if !n.checkRenewal(p, st, verb, s.Relation, s.WhereClause) {
			n.checkPicks(p, st, verb, s.Relation, pgsql.Picks(s, ctes))
		}
		return
	}
	n.checkHolderWrite(p, st, verb, s)
}

// checkHolderWrite reports an UPDATE of a lease row's other columns (the
// work that the lease guards: a job marked completed, an offset moved)
// that names the row by a parameter and tests neither the holder, nor the
// epoch, nor that the lease has not lapsed: a holder that has lost the
// lease writes over its successor's row, and nothing tells it. A queue's
// completion is checked apart (see checkCompletion).
func (n *names) checkHolderWrite(p *pgsql.Parsed, st *statement, verb string, s *pg_query.UpdateStmt) {
	rel := s.Relation.Relname
	c := n.of(rel)
	if c.holder == "" && c.epoch == "" || n.queued[rel] || setsColumn(s.TargetList, c.holder) || setsColumn(s.TargetList, c.epoch) {
		return
	}
	tests := newTests(n, s.Relation)
	tests.add(s.WhereClause)
	if !tests.picks || tests.holder || tests.epoch || tests.clock != noClock || tests.maybe || tests.lapsed {
		return
	}
	want := n.column(c.holder)
	if c.holder == "" {
		want = n.column(c.epoch)
	}
	st.problems = append(st.problems, problem{off: p.Orig(int(s.Relation.Location)),
		msg: fmt.Sprintf("%s writes the lease row it names without testing %s or %s > clock_timestamp(): a holder that has lost the lease writes over its successor's row; test that it still holds it", verb, want, n.column(c.expiry))})
}

// checkRenewal checks the condition of a statement that extends the lease
// on rel: it compares expiry with nothing but the database clock, and each
// of its arms that matches the holder's own row (a renewal) tests that the
// lease has not expired. An arm that matches any expired row (a takeover)
// needs no holder. It reports whether it found expiry tested against a
// time the process chose.
func (n *names) checkRenewal(p *pgsql.Parsed, st *statement, verb string, rel *pg_query.RangeVar, where *pg_query.Node) (processTime bool) {
	cols := n.of(rel.Relname)
	expiry, lapse := cols.expiry, "clock_timestamp()"
	if cols.heartbeat {
		lapse = "clock_timestamp() minus the lease's interval"
	}
	all := arms(where)
	takes := false // an arm takes over the rows whose lease has passed
	for _, arm := range all {
		tests := newTests(n, rel)
		for _, c := range arm {
			tests.add(c)
		}
		takes = takes || tests.lapsed
	}
	for _, arm := range all {
		tests := newTests(n, rel)
		for _, c := range arm {
			tests.add(c)
		}
		// The holder's own row: named by the holder, or, in a table
		// without a holder column, by the epoch it was given; in a table
		// with neither, or beside an arm that takes over lapsed rows,
		// the rows the caller names (WHERE expires_at < now() OR id =
		// ANY($5): the leases it holds), whoever took them.
		named := tests.picks && !tests.lapsed
		own := tests.holder || cols.holder == "" && tests.epoch || cols.holder == "" && cols.epoch == "" && named || takes && named
		// An arm that matches the holder's row, or any row whatever its
		// expiry (an extension only a holder sends), renews.
		st.renews = st.renews || own || tests.clock == noClock && tests.paramText == "" && !tests.maybe
		if tests.paramText != "" {
			st.problems = append(st.problems, problem{off: p.Orig(tests.paramLoc),
				msg: n.processTime(verb, rel.Relname, p.Spell(tests.paramLoc, tests.paramText))})
			return true
		}
		if own && tests.clock == noClock && !tests.maybe {
			st.problems = append(st.problems, problem{off: p.Orig(int(rel.Location)),
				msg: fmt.Sprintf("renewal does not test %s > %s: it revives a lease that has expired", n.column(expiry), lapse)})
			return false
		}
	}
	return false
}

// checkPicks reports a SELECT of the lease table that chooses the rows a
// claim writes (see picks) and tests their expiry against a time the
// process chose (WHERE id = (SELECT id FROM jobs WHERE locked_until < $2
// … FOR UPDATE SKIP LOCKED)): the claiming process's clock decides that
// the holder's lease has lapsed. Its other tests (claimed_by = -1: rows
// no one holds) choose rows; they are not the holder's.
func (n *names) checkPicks(p *pgsql.Parsed, st *statement, verb string, rel *pg_query.RangeVar, picks []*pg_query.SelectStmt) {
	for _, sel := range picks {
		for _, arm := range arms(sel.WhereClause) {
			tests := newTests(n, pgsql.PickedFrom(sel))
			for _, c := range arm {
				tests.add(c)
			}
			if tests.lapsed && tests.paramText != "" {
				st.problems = append(st.problems, problem{off: p.Orig(tests.paramLoc),
					msg: n.processTime(verb, rel.Relname, p.Spell(tests.paramLoc, tests.paramText))})
				return
			}
		}
	}
}

// arms returns the alternatives of a condition: its conjuncts, or, where
// one of them is an OR, the other conjuncts with each of its terms in turn
// (a = 1 AND (b OR c) has the arms a = 1 AND b and a = 1 AND c). A
// COALESCE of conditions is its first that is not NULL, so each is an
// alternative, but for a constant false or NULL, which matches no row:
// COALESCE(s.expired, l.acquired_at < $3) has the arms s.expired and
// l.acquired_at < $3.
func arms(where *pg_query.Node) [][]*pg_query.Node {
	conj := pgsql.Conjuncts(where)
	for i, c := range conj {
		var alts []*pg_query.Node
		if b := c.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_OR_EXPR {
			alts = b.Args
		} else if ce := c.GetCoalesceExpr(); ce != nil {
			for _, a := range ce.Args {
				if k := a.GetAConst(); k == nil || !k.Isnull && (k.GetBoolval() == nil || k.GetBoolval().Boolval) {
					alts = append(alts, a)
				}
			}
		} else {
			continue
		}
		rest := slices.Concat(conj[:i], conj[i+1:])
		var out [][]*pg_query.Node
		for _, d := range alts {
			for _, arm := range arms(d) {
				out = append(out, slices.Concat(rest, arm))
			}
		}
		return out
	}
	return [][]*pg_query.Node{conj}
}

// caseArms returns the results of v, a CASE expression, its ELSE (NULL
// where it has none) included; false if v is no CASE.
func caseArms(v *pg_query.Node) ([]*pg_query.Node, bool) {
	ce := v.GetCaseExpr()
	if ce == nil {
		return nil, false
	}
	var arms []*pg_query.Node
	for _, w := range ce.Args {
		if cw := w.GetCaseWhen(); cw != nil {
			arms = append(arms, cw.Result)
		}
	}
	def := ce.Defresult
	if def == nil {
		def = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}
	}
	return append(arms, def), true
}

// releases reports whether the assignments of an UPDATE end the lease
// rather than extend it: expiry set to NULL, to -infinity or to the
// database clock itself (which renews a heartbeat), or the holder cleared.
func releases(c columns, targets []*pg_query.Node) bool {
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
		case "":
		case c.expiry:
			if pgsql.IsNull(v) || isString(v, "-infinity") {
				return true
			}
			if arms, ok := caseArms(v); ok {
				// A CASE whose every result keeps the expiry or ends it
				// releases the lease where it does not keep it.
				ends := true
				for _, arm := range arms {
					parts := pgsql.Ident(arm)
					keeps := len(parts) > 0 && parts[len(parts)-1] == c.expiry
					ends = ends && (keeps || releases(c, []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Name: c.expiry, Val: arm}}}}))
				}
				if ends {
					return true
				}
			}
			if k, _, _ := clockOf(v); k != noClock && k != paramClock && !c.heartbeat {
				return true // the clock itself, no interval added
			}
		case c.holder:
			if pgsql.IsNull(v) || isString(v, "") {
				return true
			}
		}
	}
	return false
}

func isString(v *pg_query.Node, s string) bool {
	c := v.GetAConst()
	return c != nil && c.GetSval() != nil && strings.EqualFold(c.GetSval().Sval, s)
}

// checkLeaseInsert checks that an INSERT into the lease table (a first
// acquisition) sets expiry from the database clock.
func (n *names) checkLeaseInsert(p *pgsql.Parsed, st *statement, s *pg_query.InsertStmt) {
	verb := "INSERT into " + n.display(s.Relation.Relname)
	c := n.of(s.Relation.Relname)
	col, epochCol := -1, -1
	for i, rt := range s.Cols {
		switch name := rt.GetResTarget().GetName(); name {
		case "":
		case c.expiry:
			col = i
		case c.epoch:
			epochCol = i
		}
	}
	if s.OnConflictClause == nil && !setsColumn(s.Cols, c.holder) && (col < 0 || !n.insertsRenewed(s)) {
		return // a row that nobody holds (a queued message): no acquisition
	}
	if oc := s.OnConflictClause; oc != nil && oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING && col < 0 && epochCol < 0 && !setsColumn(s.Cols, c.holder) {
		return // a lease's row added unheld (INSERT … ON CONFLICT DO NOTHING), to be taken later: no acquisition
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
				n.checkExpiryValue(p, st, verb, c.expiry, items[col], -1)
			}
		}
	}
	if oc := s.OnConflictClause; oc != nil {
		if oc.WhereClause != nil || oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING {
			st.lease = renewal // the row may not be taken: rows affected say whether it was
		}
		if releases(c, oc.TargetList) {
			return
		}
		for _, t := range oc.TargetList {
			if rt := t.GetResTarget(); rt != nil && rt.Name == c.expiry && !pgsql.IsExcluded(rt.Val) {
				n.checkExpiryValue(p, st, verb, c.expiry, rt.Val, int(rt.Location))
			}
		}
		if setsColumn(oc.TargetList, c.expiry) && oc.WhereClause != nil {
			n.checkRenewal(p, st, verb, s.Relation, oc.WhereClause)
		}
	}
}

// insertsRenewed reports whether s sets every column by which the renewal
// of its table names the rows it extends, two or more: the row that the
// renewal extends is the one the INSERT made, a lease's name and its
// holder's token (the holder being unknown where the two could each be
// it). A queue's items, renewed by their id, are inserted before anyone
// holds them.
func (n *names) insertsRenewed(s *pg_query.InsertStmt) bool {
	by := n.renewedBy[s.Relation.Relname]
	if len(by) < 2 {
		return false
	}
	for _, col := range by {
		if !setsColumn(s.Cols, col) {
			return false
		}
	}
	return true
}

// copies reports whether val, written to the epoch column of rel by a
// statement with condition where, is the epoch as the caller gave it,
// replacing one the statement does not test: a row copied in (a fixture,
// an import, a restore), not an acquisition, renewal or takeover, and the
// rule does not judge its expiry. A takeover that computes the next epoch
// in Go tests the one it replaces (WHERE epoch = $4); one in SQL adds to
// it.
func (n *names) copies(val *pg_query.Node, rel *pg_query.RangeVar, where *pg_query.Node) bool {
	if adds(n.of(rel.Relname).epoch, val) {
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
func (n *names) checkExpiryValue(p *pgsql.Parsed, st *statement, verb, expiry string, val *pg_query.Node, loc int) {
	if arms, ok := caseArms(val); ok {
		// CASE WHEN … THEN expires ELSE NULL END: each result is judged
		// on its own; one that keeps the expiry, or clears it, sets no
		// time, and the conditions choose, they set nothing.
		for _, arm := range arms {
			if parts := pgsql.Ident(arm); len(parts) > 0 && parts[len(parts)-1] == expiry || pgsql.IsNull(arm) {
				continue
			}
			n.checkExpiryValue(p, st, verb, expiry, arm, -1)
		}
		return
	}
	kind, text, at := clockIn(val)
	if kind == wallClock || kind == stmtClock || kind == txClock || hasPlaceholder(val) {
		return
	}
	if loc < 0 {
		loc = at
	}
	if kind == paramClock {
		st.problems = append(st.problems, problem{off: p.Orig(loc),
			msg: fmt.Sprintf("%s sets %s from %s, a time the process chose: compute it from clock_timestamp()", verb, n.column(expiry), p.Spell(at, text))})
		return
	}
	if pgsql.IsNull(val) {
		return
	}
	st.problems = append(st.problems, problem{off: p.Orig(loc),
		msg: fmt.Sprintf("%s sets %s without the database clock: compute it from clock_timestamp()", verb, n.column(expiry))})
}

// setsColumn reports whether an UPDATE's or ON CONFLICT's assignments set
// col.
func setsColumn(targets []*pg_query.Node, col string) bool {
	if col == "" {
		return false
	}
	for _, t := range targets {
		if t.GetResTarget().GetName() == col {
			return true
		}
	}
	return false
}

func (n *names) insertSetsEpoch(s *pg_query.InsertStmt) bool {
	if oc := s.OnConflictClause; oc != nil && n.setsEpoch(oc.TargetList) {
		return true
	}
	sel := s.SelectStmt.GetSelectStmt()
	for i, c := range s.Cols {
		col := c.GetResTarget().GetName()
		// The value inserted: the column's item of a VALUES row, or of
		// the SELECT's target list.
		var vals []*pg_query.Node
		for _, row := range sel.GetValuesLists() {
			if items := row.GetList().GetItems(); i < len(items) {
				vals = append(vals, items[i])
			}
		}
		if tl := sel.GetTargetList(); len(sel.GetValuesLists()) == 0 && i < len(tl) {
			vals = append(vals, tl[i].GetResTarget().GetVal())
		}
		if len(vals) == 0 {
			vals = append(vals, nil)
		}
		for _, v := range vals {
			if n.carriesEpoch(col, v) {
				return true
			}
		}
	}
	return false
}
