// Package leaseschema infers a lease package's lease schema from what its
// SQL does, whatever the tables and columns are called: which tables hold
// leases, and which of their columns is the holder, the epoch (the fencing
// token) and the expiry. The clock and fence rules read the same schema.
//
// A column's role is decided by the statements that use it, as a reviewer
// reads them:
//
//   - expiry: a column that an UPDATE sets from a time (a database clock
//     or a parameter, plus an interval or not: a lease's end moves, a row's
//     id does not) and that a statement compares by order with a time
//     (expires_at < now(), $3 >= timeout);
//   - holder: a column that an acquisition sets from a parameter together
//     with the expiry (a takeover's SET, an INSERT's columns other than the
//     conflict key) and that a write's condition tests for equality with a
//     parameter (a renewal's or a release's WHERE holder = $2); a write
//     that sets the expiry sets or names the holder, or the time is no
//     expiry of its lease (a row's activity stamp);
//   - epoch: a column that a write counts up (epoch = epoch + 1), takes from
//     a sequence or a random function, or compares and sets
//     (SET range_id = $1 WHERE range_id = $2), and that a statement tests
//     for equality with a parameter.
//
// An expiry that no write sets from a time plus an interval, and that a
// statement compares with a time plus or minus one (heartbeat < now() -
// interval '1 minute'), or that the write setting the holder sets to the
// clock itself (SET holder_id = $1, acquired_at = now(): a lease that
// ended now would have passed at once), is a heartbeat: it holds when the
// lease was last renewed, and the lease lapses an interval after it, so a
// renewal sets it to the clock itself.
//
// A liveness row holds no lease of its own: its holder heartbeats it, and
// the holder's locks, rows of another table, go when the heartbeat is
// older than a timeout (DELETE FROM locks WHERE controller IN (SELECT
// controller FROM controllers WHERE time <= $1)). The sweep shows the
// liveness table's expiry (the heartbeat it compares), and its holder:
// the column it selects, where a write tests it for equality with a
// parameter (the heartbeat's WHERE controller = $2). A takeover that
// joins the rows it takes with a session's by their holder, and tests
// whether the session has passed, shows the session's table the same way
// (see joinedLiveness).
//
// A table is a lease table when it has an expiry and a holder or an epoch,
// a renewal (a write that extends the expiry of the rows named by a
// parameter whose expiry has not passed: UPDATE leases SET exp = $1 WHERE
// name = $2 AND exp > $3), or a takeover: one write that sets the expiry of the rows whose expiry
// it compares by order (a job queue's visibility timeout), or a claim: a
// write that sets the expiry, and who claims, on the rows that a locking
// SELECT of its table chose (see claims). Rows taken once
// they have been idle for an interval (SET seen = now() WHERE seen < now()
// - interval) show a heartbeat, or a task run at most so often: without a
// holder or an epoch they show no lease, unless a write clears the time
// on the rows a parameter names (SET triggered_at = NULL WHERE key = $1):
// a release, which a pace never does; or unless a statement reaps the
// rows whose time has passed and frees what they held (see reaps). A
// time compared as COALESCE(col, default) is the column compared. Where two
// columns could play one role the role is left empty: without evidence,
// nothing is inferred. A column that the Go code sets from, or tests
// against, two or more values it names itself (constants or package
// variables: a status) plays none of the roles.
package leaseschema

import (
	"go/token"
	"slices"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

// Role is what a column does for a lease.
type Role int

// The roles.
const (
	Holder Role = iota // the column that names who holds the lease
	Epoch              // the fencing token
	Expiry             // when the lease lapses
)

func (r Role) String() string {
	return [...]string{"holder", "epoch", "expiry"}[r]
}

// Evidence is a place in one of the statements given to Infer that
// decided something: the index of the statement and the offset of the
// node in its text, with what it shows.
type Evidence struct {
	Pos  token.Pos // the Stmt's Pos
	Stmt int       // index into the statements given to Infer
	Loc  int       // offset in that statement's text, or -1
	Why  string    // "sets timeout from a time plus an interval"
}

// Table is what the statements show of one table.
type Table struct {
	Name string // the relation name, as PostgreSQL reads it (a placeholder for a name chosen at run time)

	// Columns by role; "" where no column plays the role.
	Holder, Epoch, Expiry string
	// Heartbeat reports that Expiry holds when the lease was last renewed
	// (see the package doc): a renewal sets it to the clock itself.
	Heartbeat bool
	// Why holds the evidence for each role that has a column.
	Why map[Role][]Evidence

	// Lease reports whether the table holds leases (see the package
	// doc), and Takeover the write that shows a takeover, if any.
	Lease    bool
	Takeover *Evidence
	// Renewal is a write that extends the expiry of the rows whose
	// expiry has not passed, chosen by equality with parameters (UPDATE
	// leases SET exp = $1 WHERE name = $2 AND key = $3 AND exp > $4), if
	// any: a lease's renewal, whoever holds it.
	Renewal *Evidence
	// RenewedBy is the columns by which the Renewal names its rows.
	RenewedBy []string

	seen map[string]bool // the columns that the statements set or compare
}

// Uses reports whether a statement sets col of the table, or compares it
// with a parameter or a time.
func (t *Table) Uses(col string) bool { return t.seen[col] }

// Column returns the column that plays role r, or "".
func (t *Table) Column(r Role) string {
	switch r {
	case Holder:
		return t.Holder
	case Epoch:
		return t.Epoch
	}
	return t.Expiry
}

// Schema is the tables that the statements write, by name.
type Schema struct {
	Tables map[string]*Table
}

// Leases returns the lease tables in name order.
func (s *Schema) Leases() []*Table {
	var out []*Table
	for _, t := range s.Tables {
		if t.Lease {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Stmt is one parsed statement to learn from.
type Stmt struct {
	Raw *pg_query.RawStmt
	// Pos is where the Go code sends or holds the statement, or
	// token.NoPos.
	Pos token.Pos
	// Loc maps an offset of the parsed text to one of the text given,
	// or is nil.
	Loc func(int) int
	// Consts are the parameters ($1 is 1) that the Go code fills with a
	// constant, by number, with the constant's value.
	Consts map[int]string
}

// facts are what the statements do with one column of one table.
type facts struct {
	setTime   []Evidence      // set from a time: a clock, a parameter, or either plus an interval
	moved     bool            // ... by an UPDATE's or ON CONFLICT's SET: a lease's end moves, an id or a cursor does not
	setFromIv []Evidence      // set from a time plus an interval
	setParam  []Evidence      // set from a parameter in a write that also sets a time column (an acquisition): an UPDATE, or an INSERT … ON CONFLICT
	setInsert []Evidence      // the same in a plain INSERT, which may be setting the key: counts where DDL names the key
	setUpdate bool            // set from a parameter in an UPDATE's or ON CONFLICT's SET (a key never is)
	ordered   []Evidence      // compared by order with a time
	dbOrdered bool            // ... with a database clock
	ivOrdered bool            // ... with a time plus or minus an interval
	equal     []Evidence      // compared for equality with a parameter in a write's or fence's condition
	matches   bool            // ... in a write's own condition (a renewal's or a release's WHERE holder = $2)
	counted   []Evidence      // counted up, taken from a sequence or a random function, or compared and set
	key       bool            // a conflict key, or part of a primary or unique key by DDL
	ddlKey    bool            // part of a primary or unique key by DDL
	chooses   bool            // a takeover's condition tests it for equality: a key or a partition, not the holder it replaces
	setWith   map[string]bool // the columns that an UPDATE's or ON CONFLICT's SET sets from a parameter beside it
	together  map[string]bool // for a time column: the columns that a write setting it also sets, or tests for equality with a parameter
	cleared   []Evidence      // set to NULL by an UPDATE of the rows named by a parameter: a release
	clockWith map[string]bool // the columns that a write setting it to the bare database clock sets from a parameter beside it
	states    map[string]bool // the Go constants it is set from, or tested for equality with
}

// state reports whether the code sets a column from, or tests it against,
// two or more Go constants (status = $1 with StatusPending, then with
// StatusComplete): a state the row moves through, not who holds it nor a
// fencing token, neither of which the code names by constants of its
// own.
func (f *facts) state() bool { return len(f.states) > 1 }

// constant records that the column is set from, or tested against, val
// when val is a parameter that the Go code fills with a constant.
func (f *facts) constant(val *pg_query.Node, consts map[int]string) {
	p := val.GetParamRef()
	if p == nil {
		return
	}
	c, ok := consts[int(p.Number)]
	if !ok {
		return
	}
	if f.states == nil {
		f.states = make(map[string]bool)
	}
	f.states[c] = true
}

type learner struct {
	tables map[string]map[string]*facts
	// takeovers: per table, the writes that set a column whose rows they
	// choose by comparing it by order.
	takeovers map[string]map[string]Evidence
	// idle: per table, the writes that set a column to the clock on the
	// rows where it is older than an interval: a heartbeat's takeover,
	// or a task run at most so often (see the package doc).
	idle map[string]map[string]Evidence
	// reaped: per table and time column, the reapings of its lapsed rows
	// (see reaps).
	reaped map[string]map[string]Evidence
	// liveness: per table and time column, the sweeps that take other
	// rows by a column of the rows whose time has passed (see the
	// package doc).
	liveness map[string]map[string]sweep
	// renewals: per table and time column, the writes that extend it on
	// rows where it has not passed (see Table.Renewal).
	renewals map[string]map[string]renewal
	// claims: per table and time column, the writes that set it on the
	// rows that a locking SELECT of the table chose for them (see
	// claims).
	claims map[string]map[string]claim
}

// claim is a write that sets a time on the rows that a locking SELECT of
// its table chose for it (see claims).
type claim struct {
	set []string // the columns that it sets from parameters, the time's own included
	ev  Evidence
}

// renewal is a write that extends a time on the rows named by parameters
// (the columns named) where it has not passed.
type renewal struct {
	named []string
	ev    Evidence
}

// sweep is a write that takes the rows of another table by key, the key
// of the rows whose time has passed.
type sweep struct {
	key    string // the column of the liveness table that the sweep selects
	joined bool   // a takeover that joins the liveness rows (see joinedLiveness), not a sweep of another table's rows
	ev     Evidence
}

// first records v as what shows something of table's column col, unless
// an earlier statement showed it: the first statement is the evidence.
func first[V any](m map[string]map[string]V, table, col string, v V) {
	if m[table] == nil {
		m[table] = make(map[string]V)
	}
	if _, ok := m[table][col]; !ok {
		m[table][col] = v
	}
}

func (l *learner) col(table, col string) *facts {
	cols := l.tables[table]
	if cols == nil {
		cols = make(map[string]*facts)
		l.tables[table] = cols
	}
	f := cols[col]
	if f == nil {
		f = &facts{}
		cols[col] = f
	}
	return f
}

// Infer reads the statements and returns the schema they show. DDL among
// them (CREATE TABLE, CREATE UNIQUE INDEX) adds the keys of tables.
func Infer(stmts []Stmt) *Schema {
	l := &learner{tables: make(map[string]map[string]*facts), takeovers: make(map[string]map[string]Evidence), idle: make(map[string]map[string]Evidence), reaped: make(map[string]map[string]Evidence), liveness: make(map[string]map[string]sweep), renewals: make(map[string]map[string]renewal), claims: make(map[string]map[string]claim)}
	for i, s := range stmts {
		l.stmt(i, s)
	}
	out := &Schema{Tables: make(map[string]*Table)}
	for name, cols := range l.tables {
		out.Tables[name] = l.decide(name, cols)
	}
	return out
}

// assignment is one column a write sets, and the value.
type assignment struct {
	col string
	val *pg_query.Node
	loc int
}

func (l *learner) stmt(i int, s Stmt) {
	ev := func(loc int, why string) Evidence {
		if s.Loc != nil && loc >= 0 {
			loc = s.Loc(loc)
		}
		return Evidence{Pos: s.Pos, Stmt: i, Loc: loc, Why: why}
	}
	raw := s.Raw
	rels := Relations(raw)
	ctes := pgsql.CTEs(raw)
	write := raw.Stmt.GetUpdateStmt() != nil || raw.Stmt.GetDeleteStmt() != nil || raw.Stmt.GetInsertStmt() != nil
	// What a write returns is no condition of it: RETURNING id = $1 tests
	// nothing that decides the write.
	returned := make(map[*pg_query.A_Expr]bool)
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		var list []*pg_query.Node
		switch {
		case x.GetUpdateStmt() != nil:
			list = x.GetUpdateStmt().ReturningList
		case x.GetDeleteStmt() != nil:
			list = x.GetDeleteStmt().ReturningList
		case x.GetInsertStmt() != nil:
			list = x.GetInsertStmt().ReturningList
		}
		for _, r := range list {
			pgsql.Walk(r, func(y *pg_query.Node) bool {
				if ae := y.GetAExpr(); ae != nil {
					returned[ae] = true
				}
				return true
			})
		}
		return true
	})
	// Comparisons anywhere in the statement, attributed to the
	// relation that their column belongs to.
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		ae := x.GetAExpr()
		if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 {
			return true
		}
		op := ae.Name[0].GetString_().GetSval()
		for _, side := range [][2]*pg_query.Node{{ae.Lexpr, ae.Rexpr}, {ae.Rexpr, ae.Lexpr}} {
			parts := pgsql.Ident(side[0])
			if op != "=" {
				parts = timeColumn(side[0])
			}
			if len(parts) == 0 || len(parts) > 2 {
				continue
			}
			col := parts[len(parts)-1]
			var tables []string
			if len(parts) == 2 {
				if t, ok := rels[parts[0]]; ok {
					tables = []string{t}
				}
			} else {
				tables = uniq(rels)
			}
			for _, t := range tables {
				switch op {
				case "<", "<=", ">", ">=":
					if k := timeOf(side[1]); k != notTime {
						f := l.col(t, col)
						f.ordered = append(f.ordered, ev(int(ae.Location), "compares "+col+" by order with "+k.String()))
						f.dbOrdered = f.dbOrdered || k == dbClock || k == dbClockPlus
						f.ivOrdered = f.ivOrdered || k == dbClockPlus || k == paramPlus
					}
				case "=":
					if pgsql.IsParam(side[1]) {
						f := l.col(t, col)
						f.equal = append(f.equal, ev(int(ae.Location), "tests "+col+" = a parameter"))
						f.matches = f.matches || write && !returned[ae]
						f.constant(side[1], s.Consts)
					}
				}
			}
		}
		return true
	})
	// Writes: what they set.
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		switch {
		case x.GetUpdateStmt() != nil:
			u := x.GetUpdateStmt()
			if u.Relation != nil {
				l.write(u.Relation.Relname, targets(u.TargetList), true, true, u.WhereClause, s.Consts, ev)
			}
		case x.GetInsertStmt() != nil:
			in := x.GetInsertStmt()
			if in.Relation == nil {
				return true
			}
			t := in.Relation.Relname
			// An INSERT … ON CONFLICT DO NOTHING acquires a free row
			// with its values. One that updates on conflict acquires a
			// held row with its SET: the values it only inserts (a
			// tenant, a partition) are the row's, not the holder's,
			// unless DDL names the key, as for a plain INSERT.
			doNothing := in.OnConflictClause != nil && in.OnConflictClause.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING
			l.write(t, insertValues(in), false, doNothing, nil, s.Consts, ev)
			if oc := in.OnConflictClause; oc != nil {
				if oc.Infer != nil {
					for _, e := range oc.Infer.IndexElems {
						if ie := e.GetIndexElem(); ie != nil && ie.Name != "" {
							l.col(t, ie.Name).key = true
						}
					}
				}
				l.write(t, conflictTargets(in), true, true, oc.WhereClause, s.Consts, ev)
			}
		case x.GetCreateStmt() != nil:
			l.ddl(x.GetCreateStmt())
		case x.GetIndexStmt() != nil:
			ix := x.GetIndexStmt()
			if (ix.Unique || ix.Primary) && ix.Relation != nil && ix.WhereClause == nil {
				for _, p := range ix.IndexParams {
					if e := p.GetIndexElem(); e != nil && e.Name != "" {
						f := l.col(ix.Relation.Relname, e.Name)
						f.key, f.ddlKey = true, true
					}
				}
			}
		}
		return true
	})
	// Takeovers: a write that sets a column whose order it compares.
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		var rel *pg_query.RangeVar
		var as []assignment
		switch {
		case x.GetUpdateStmt() != nil:
			rel, as = x.GetUpdateStmt().Relation, targets(x.GetUpdateStmt().TargetList)
		case x.GetInsertStmt() != nil && x.GetInsertStmt().OnConflictClause != nil:
			rel, as = x.GetInsertStmt().Relation, conflictTargets(x.GetInsertStmt())
		default:
			return true
		}
		if rel == nil {
			return true
		}
		var claimers []string // the columns a claim sets from a parameter
		if claims(x.GetUpdateStmt(), ctes) {
			for _, a := range as {
				if p := a.val.GetParamRef(); p != nil {
					if _, constant := s.Consts[int(p.Number)]; !constant {
						claimers = append(claimers, a.col)
					}
				}
			}
		}
		for _, a := range as {
			if pgsql.IsNull(a.val) && x.GetUpdateStmt() != nil && len(equalities(x)) > 0 {
				f := l.col(rel.Relname, a.col)
				f.cleared = append(f.cleared, ev(a.loc, "clears "+a.col+" on the rows named by a parameter: a release"))
			}
			set := timeOf(a.val)
			if set == notTime {
				continue
			}
			if claimers != nil && !pgsql.IsNull(a.val) {
				first(l.claims, rel.Relname, a.col, claim{claimers, ev(int(rel.Location), "sets "+a.col+" on the rows that it locks and claims: an acquisition")})
			}
			if named := extends(writeWhere(x), a.col); !pgsql.IsNull(a.val) && named != nil {
				first(l.renewals, rel.Relname, a.col, renewal{named, ev(int(rel.Location), "sets "+a.col+" on the rows named by a parameter whose "+a.col+" has not passed: a renewal")})
			}
			passed := lapsed(x, rel, a.col, a.val)
			if passed == notTime {
				continue
			}
			for _, col := range equalities(x) {
				l.col(rel.Relname, col).chooses = true
			}
			if (set == dbClock || set == param) && (passed == dbClockPlus || passed == paramPlus) {
				// SET seen = now() WHERE seen < now() - interval: a
				// moment, not an end. Rows idle for an interval are
				// taken: a heartbeat's, or a task run at most so often.
				// Without a holder it shows no lease, unless a release
				// clears the time (see decide).
				first(l.idle, rel.Relname, a.col, ev(int(rel.Location), "sets "+a.col+" to the clock on the rows where it is older than an interval: a takeover of idle rows"))
				continue
			}
			first(l.takeovers, rel.Relname, a.col, ev(int(rel.Location), "sets "+a.col+" on the rows whose "+a.col+" has passed: a takeover"))
		}
		return true
	})
	l.reaps(raw, ev)
	// Sweeps: a write that takes rows by key, the keys of another table's
	// rows whose time has passed.
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		var rel *pg_query.RangeVar
		var where *pg_query.Node
		switch {
		case x.GetUpdateStmt() != nil:
			rel, where = x.GetUpdateStmt().Relation, x.GetUpdateStmt().WhereClause
		case x.GetDeleteStmt() != nil:
			rel, where = x.GetDeleteStmt().Relation, x.GetDeleteStmt().WhereClause
		default:
			return true
		}
		if rel == nil {
			return true
		}
		for _, c := range pgsql.Conjuncts(where) {
			sl := c.GetSubLink()
			if sl == nil || sl.SubLinkType != pg_query.SubLinkType_ANY_SUBLINK || len(pgsql.Ident(sl.Testexpr)) == 0 {
				continue
			}
			table, key, col, ok := lapsedKeys(sl.Subselect.GetSelectStmt())
			if !ok || table == rel.Relname {
				continue
			}
			first(l.liveness, table, col, sweep{key: key, ev: ev(int(sl.Location), "takes rows of "+rel.Relname+" by the "+key+" of the rows whose "+col+" has passed: a liveness row")})
		}
		return true
	})
	l.joinedLiveness(raw, ctes, ev)
}

// joinedLiveness records the liveness rows that a takeover joins: a
// statement that sets the holder of a table's rows from a parameter
// (UPDATE maintenance_leases SET holder_id = $1 …) and joins them with
// the rows of another table, or of a WITH query over one, by that holder
// (LEFT JOIN sessions s ON s.consumer_id = l.holder_id), where it tests
// whether those have passed (s.expires_at < now(), or a WITH query's
// column computed so: SELECT consumer_id, expires_at < now() AS expired
// FROM consumer_sessions). The holder's session is the liveness row, its
// key the holder, and its time the expiry of every lease that defers to
// it.
func (l *learner) joinedLiveness(raw *pg_query.RawStmt, ctes map[string]*pg_query.SelectStmt, ev func(int, string) Evidence) {
	holders := make(map[string]map[string]bool) // table, holder column set from a parameter
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		if u := x.GetUpdateStmt(); u != nil && u.Relation != nil {
			for _, a := range targets(u.TargetList) {
				if pgsql.IsParam(a.val) {
					if holders[u.Relation.Relname] == nil {
						holders[u.Relation.Relname] = make(map[string]bool)
					}
					holders[u.Relation.Relname][a.col] = true
				}
			}
		}
		return true
	})
	if len(holders) == 0 {
		return
	}
	// lapse returns the column of rv's rows that sel (or the whole
	// statement, for a table joined directly) compares by order with a
	// time, earlier than it: the rows that have passed.
	lapse := func(in protoreflect.ProtoMessage, names map[string]bool) string {
		col := ""
		pgsql.Walk(in, func(x *pg_query.Node) bool {
			earlier, later, ok := earlierLater(x.GetAExpr())
			if !ok || timeOf(later) == notTime {
				return true
			}
			if p := pgsql.Ident(earlier); len(p) == 1 && names[""] || len(p) == 2 && names[p[0]] {
				col = p[len(p)-1]
			}
			return true
		})
		return col
	}
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		j := x.GetJoinExpr()
		if j == nil {
			return true
		}
		byName := make(map[string]*pg_query.RangeVar)
		var visit func(n *pg_query.Node)
		visit = func(n *pg_query.Node) {
			if rv := n.GetRangeVar(); rv != nil {
				byName[rv.Relname] = rv
				if rv.Alias != nil {
					byName[rv.Alias.Aliasname] = rv
				}
			} else if jj := n.GetJoinExpr(); jj != nil {
				visit(jj.Larg)
				visit(jj.Rarg)
			}
		}
		visit(j.Larg)
		visit(j.Rarg)
		for _, c := range pgsql.Conjuncts(j.Quals) {
			ae := c.GetAExpr()
			if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "=" {
				continue
			}
			a, b := pgsql.Ident(ae.Lexpr), pgsql.Ident(ae.Rexpr)
			for _, pair := range [][2][]string{{a, b}, {b, a}} {
				live, held := pair[0], pair[1]
				if len(live) != 2 || len(held) != 2 || byName[live[0]] == nil || byName[held[0]] == nil {
					continue
				}
				lease := byName[held[0]]
				if _, cte := ctes[lease.Relname]; cte || !holders[lease.Relname][held[1]] {
					continue
				}
				rv := byName[live[0]]
				table, col := rv.Relname, ""
				if sel, ok := ctes[rv.Relname]; ok && rv.Schemaname == "" {
					from := pgsql.PickedFrom(sel)
					if from == nil || ctes[from.Relname] != nil || !selects(sel, live[1]) {
						continue
					}
					names := map[string]bool{"": true, from.Relname: true}
					if from.Alias != nil {
						names = map[string]bool{"": true, from.Alias.Aliasname: true}
					}
					table, col = from.Relname, lapse(sel, names)
				} else {
					col = lapse(raw, map[string]bool{live[0]: true})
				}
				if col == "" || col == live[1] || table == lease.Relname {
					continue
				}
				first(l.liveness, table, col, sweep{key: live[1], joined: true, ev: ev(int(rv.Location), "takes rows of "+lease.Relname+" by the "+live[1]+" of its rows whose "+col+" has passed: a liveness row")})
			}
		}
		return true
	})
}

// selects reports whether sel returns column col of its table as itself.
func selects(sel *pg_query.SelectStmt, col string) bool {
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if p := pgsql.Ident(rt.GetVal()); len(p) > 0 && p[len(p)-1] == col && (rt.Name == "" || rt.Name == col) {
			return true
		}
	}
	return false
}

// claims reports whether u, an UPDATE (or nil) of a statement whose
// common table expressions are ctes, writes rows that a SELECT of its own
// table chose and locked for it: UPDATE jobs SET
// worker = $1, heartbeat = $2 WHERE id = (SELECT id FROM jobs WHERE …
// FOR UPDATE SKIP LOCKED LIMIT 1). Where it also sets from a parameter
// a column that is no time, no key and no state (who claims), a worker
// claims the rows, and a time that the claim sets is when its claim
// began or was last renewed; a claim that sets only times paces a task
// (see the package doc).
func claims(u *pg_query.UpdateStmt, ctes map[string]*pg_query.SelectStmt) bool {
	if u == nil || u.Relation == nil {
		return false
	}
	for _, sel := range pgsql.Picks(u, ctes) {
		if len(sel.LockingClause) > 0 {
			return true
		}
	}
	return false
}

// reaps records the reapings in raw: a DELETE in a WITH of the rows whose
// time has passed (DELETE FROM job_lock WHERE triggered_at < now() -
// interval RETURNING job_id) whose rows another write of the statement
// reads (UPDATE jobs SET state = 'failed' FROM stale WHERE …): the holders
// that stopped renewing lose their rows, and what those held is freed. A
// cache's eviction deletes idle rows and does nothing with them.
func (l *learner) reaps(raw *pg_query.RawStmt, ev func(int, string) Evidence) {
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		cte := x.GetCommonTableExpr()
		del := cte.GetCtequery().GetDeleteStmt()
		if del == nil || del.Relation == nil || len(del.ReturningList) == 0 || !readByWrite(raw, cte.Ctename, del) {
			return true
		}
		for _, c := range pgsql.Conjuncts(del.WhereClause) {
			colSide, timeSide, ok := earlierLater(c.GetAExpr()) // col < time
			p := timeColumn(colSide)
			if !ok || len(p) == 0 || len(p) > 2 || timeOf(timeSide) == notTime {
				continue
			}
			col := p[len(p)-1]
			first(l.reaped, del.Relation.Relname, col, ev(int(del.Relation.Location), "deletes the rows whose "+col+" has passed and frees what they held: a takeover"))
		}
		return true
	})
}

// readByWrite reports whether a write of raw other than del reads the
// WITH entry named cte.
func readByWrite(raw *pg_query.RawStmt, cte string, del *pg_query.DeleteStmt) bool {
	found := false
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		if found {
			return false
		}
		var w *pg_query.Node
		switch {
		case x.GetUpdateStmt() != nil, x.GetInsertStmt() != nil:
			w = x
		case x.GetDeleteStmt() != nil && x.GetDeleteStmt() != del:
			w = x
		default:
			return true
		}
		pgsql.Walk(w, func(y *pg_query.Node) bool {
			if cte := y.GetCommonTableExpr(); cte != nil {
				return false // a WITH entry of its own: walked apart
			}
			found = found || y.GetRangeVar().GetRelname() == cte && y.GetRangeVar().GetSchemaname() == ""
			return !found
		})
		return !found
	})
	return found
}

// writeWhere returns the condition of x, an UPDATE or an INSERT … ON
// CONFLICT DO UPDATE.
func writeWhere(x *pg_query.Node) *pg_query.Node {
	if u := x.GetUpdateStmt(); u != nil {
		return u.WhereClause
	}
	if in := x.GetInsertStmt(); in != nil && in.OnConflictClause != nil {
		return in.OnConflictClause.WhereClause
	}
	return nil
}

// extends returns the columns by whose equality with a parameter where,
// a write's condition, chooses rows, if it chooses them only where col
// has not passed (col > now(), $4 < col): the write extends a lease that
// is still held. Otherwise it returns nil.
func extends(where *pg_query.Node, col string) []string {
	var named []string
	unexpired := false
	for _, c := range pgsql.Conjuncts(where) {
		ae := c.GetAExpr()
		if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 {
			continue
		}
		switch ae.Name[0].GetString_().GetSval() {
		case "=":
			for _, side := range [][2]*pg_query.Node{{ae.Lexpr, ae.Rexpr}, {ae.Rexpr, ae.Lexpr}} {
				if p := pgsql.Ident(side[0]); len(p) > 0 && p[len(p)-1] != col && pgsql.IsParam(side[1]) {
					named = append(named, p[len(p)-1])
				}
			}
		default:
			timeSide, colSide, ok := earlierLater(ae) // time < col
			if p := pgsql.Ident(colSide); ok && len(p) > 0 && p[len(p)-1] == col && timeOf(timeSide) != notTime {
				unexpired = true
			}
		}
	}
	if !unexpired {
		return nil
	}
	return named
}

// earlierLater returns the sides of an order comparison, the one it
// holds earlier first: a and b for a < b or a <= b, b and a for a > b or
// a >= b. ok is false for any other expression.
func earlierLater(ae *pg_query.A_Expr) (earlier, later *pg_query.Node, ok bool) {
	if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 {
		return nil, nil, false
	}
	switch ae.Name[0].GetString_().GetSval() {
	case "<", "<=":
		return ae.Lexpr, ae.Rexpr, true
	case ">", ">=":
		return ae.Rexpr, ae.Lexpr, true
	}
	return nil, nil, false
}

// lapsedKeys reports whether sel selects one column (key) of one table
// of the rows whose time column col has passed (col <= $1, col < now() -
// interval).
func lapsedKeys(sel *pg_query.SelectStmt) (table, key, col string, ok bool) {
	if sel == nil || len(sel.FromClause) != 1 || len(sel.TargetList) != 1 {
		return "", "", "", false
	}
	rv := sel.FromClause[0].GetRangeVar()
	parts := pgsql.Ident(sel.TargetList[0].GetResTarget().GetVal())
	if rv == nil || len(parts) == 0 || len(parts) > 2 {
		return "", "", "", false
	}
	names := map[string]bool{rv.Relname: true}
	if rv.Alias != nil {
		names = map[string]bool{rv.Alias.Aliasname: true}
	}
	ofTable := func(parts []string) bool { return len(parts) == 1 || len(parts) == 2 && names[parts[0]] }
	if !ofTable(parts) {
		return "", "", "", false
	}
	key = parts[len(parts)-1]
	for _, c := range pgsql.Conjuncts(sel.WhereClause) {
		colSide, timeSide, ok := earlierLater(c.GetAExpr()) // col < time
		if !ok {
			continue
		}
		if p := pgsql.Ident(colSide); len(p) > 0 && len(p) <= 2 && ofTable(p) && p[len(p)-1] != key && timeOf(timeSide) != notTime {
			return rv.Relname, key, p[len(p)-1], true
		}
	}
	return "", "", "", false
}

// write records the assignments of one write to table. update reports an
// UPDATE's or ON CONFLICT's SET, keyed one that names the row it takes
// by its key (an UPDATE, an INSERT … ON CONFLICT); where is its
// condition, and consts the parameters that the Go code fills with
// constants (see Stmt.Consts).
func (l *learner) write(table string, as []assignment, update, keyed bool, where *pg_query.Node, consts map[int]string, ev func(int, string) Evidence) {
	setsTime := false
	for _, a := range as {
		if timeOf(a.val) != notTime && !pgsql.IsNull(a.val) {
			setsTime = true
		}
	}
	casTested := make(map[string]bool)
	for _, c := range pgsql.Conjuncts(where) {
		if ae := c.GetAExpr(); ae != nil && ae.Kind == pg_query.A_Expr_Kind_AEXPR_OP && len(ae.Name) == 1 && ae.Name[0].GetString_().GetSval() == "=" {
			for _, side := range [][2]*pg_query.Node{{ae.Lexpr, ae.Rexpr}, {ae.Rexpr, ae.Lexpr}} {
				if parts := pgsql.Ident(side[0]); len(parts) > 0 && pgsql.IsParam(side[1]) {
					casTested[parts[len(parts)-1]] = true
				}
			}
		}
	}
	for _, a := range as {
		f := l.col(table, a.col)
		if timeOf(a.val) != notTime && !pgsql.IsNull(a.val) {
			if f.together == nil {
				f.together = make(map[string]bool)
			}
			for _, b := range as {
				f.together[b.col] = true
			}
			for c := range casTested {
				f.together[c] = true
			}
		}
		if update {
			for _, b := range as {
				if b.col != a.col && (pgsql.IsParam(b.val) || pgsql.IsExcluded(b.val)) {
					if f.setWith == nil {
						f.setWith = make(map[string]bool)
					}
					f.setWith[b.col] = true
					if timeOf(a.val) == dbClock {
						if f.clockWith == nil {
							f.clockWith = make(map[string]bool)
						}
						f.clockWith[b.col] = true
					}
				}
			}
		}
		switch k := timeOf(a.val); {
		case k == dbClockPlus || k == paramPlus:
			f.setFromIv = append(f.setFromIv, ev(a.loc, "sets "+a.col+" from "+k.String()))
			f.setTime = append(f.setTime, ev(a.loc, "sets "+a.col+" from "+k.String()))
		case k != notTime:
			f.setTime = append(f.setTime, ev(a.loc, "sets "+a.col+" from "+k.String()))
		}
		f.moved = f.moved || update && timeOf(a.val) != notTime
		switch {
		case counts(a.val, a.col):
			f.counted = append(f.counted, ev(a.loc, "counts "+a.col+" up"))
		case update && fromSequence(a.val):
			// A new row's id comes from a sequence too: only a token
			// issued anew to a row that exists is an epoch.
			f.counted = append(f.counted, ev(a.loc, "takes "+a.col+" from a sequence or a random function"))
		case update && pgsql.IsParam(a.val) && casTested[a.col]:
			f.counted = append(f.counted, ev(a.loc, "compares and sets "+a.col))
		}
		f.constant(a.val, consts)
		if pgsql.IsParam(a.val) || pgsql.IsExcluded(a.val) {
			switch {
			case setsTime && keyed:
				f.setParam = append(f.setParam, ev(a.loc, "sets "+a.col+" from a parameter with the expiry"))
			case setsTime:
				f.setInsert = append(f.setInsert, ev(a.loc, "sets "+a.col+" from a parameter with the expiry"))
			}
			if update && setsTime {
				f.setUpdate = true
			}
		}
	}
}

// decide gives each role the one column that shows it, and says whether
// the table holds leases.
func (l *learner) decide(name string, cols map[string]*facts) *Table {
	t := &Table{Name: name, Why: make(map[Role][]Evidence), seen: make(map[string]bool)}
	for col := range cols {
		t.seen[col] = true
	}
	pick := func(r Role, ok func(col string, f *facts) bool, why func(f *facts) []Evidence) {
		var found []string
		for col, f := range cols {
			if ok(col, f) {
				found = append(found, col)
			}
		}
		if len(found) != 1 {
			return // none, or more than one: no evidence which
		}
		col := found[0]
		switch r {
		case Holder:
			t.Holder = col
		case Epoch:
			t.Epoch = col
		case Expiry:
			t.Expiry = col
		}
		t.Why[r] = why(cols[col])
	}
	// Expiry: set from a time, compared by order with one. Where several
	// are, the one set from a time plus an interval, then the one
	// compared with the database clock.
	expiry := func(_ string, f *facts) bool { return f.moved && len(f.ordered) > 0 }
	pick(Expiry, expiry, func(f *facts) []Evidence { return []Evidence{f.setTime[0], f.ordered[0]} })
	if t.Expiry == "" {
		pick(Expiry, func(col string, f *facts) bool { return expiry(col, f) && len(f.setFromIv) > 0 },
			func(f *facts) []Evidence { return []Evidence{f.setFromIv[0], f.ordered[0]} })
	}
	if t.Expiry == "" {
		pick(Expiry, func(col string, f *facts) bool { return expiry(col, f) && len(f.setFromIv) > 0 && f.dbOrdered },
			func(f *facts) []Evidence { return []Evidence{f.setFromIv[0], f.ordered[0]} })
	}
	if t.Expiry == "" {
		// Several times that rows are chosen by (a lock's expiry, a
		// sticky deadline): the one that a write sets beside the column
		// that holds it, as an acquisition sets both.
		pick(Expiry, func(col string, f *facts) bool {
			if !expiry(col, f) {
				return false
			}
			for h := range f.setWith {
				if g := cols[h]; g != nil && g.setUpdate && g.matches && !g.key && !g.chooses && len(g.counted) == 0 && len(g.ordered) == 0 {
					return true
				}
			}
			return false
		}, func(f *facts) []Evidence { return []Evidence{f.setTime[0], f.ordered[0]} })
	}
	if t.Expiry == "" {
		// Several times that rows are chosen by (when a row last ran,
		// whether it is held): the one that a takeover of idle rows
		// sets and a release clears.
		pick(Expiry, func(col string, f *facts) bool {
			_, idle := l.idle[name][col]
			return expiry(col, f) && idle && len(f.cleared) > 0
		}, func(f *facts) []Evidence { return []Evidence{f.setTime[0], f.ordered[0]} })
	}
	// Epoch: counted, and tested for equality.
	pick(Epoch, func(col string, f *facts) bool {
		return col != t.Expiry && len(f.counted) > 0 && len(f.equal) > 0 && !f.state()
	}, func(f *facts) []Evidence { return []Evidence{f.counted[0], f.equal[0]} })
	// Holder: set with the expiry by an acquisition, not a key, and
	// tested for equality by another write. A plain INSERT may be setting
	// the row's key: it counts only where DDL names the key.
	ddlKeyed := false
	for _, f := range cols {
		ddlKeyed = ddlKeyed || f.ddlKey
	}
	acquired := func(f *facts) []Evidence {
		if ddlKeyed {
			return slices.Concat(f.setParam, f.setInsert)
		}
		return f.setParam
	}
	pick(Holder, func(col string, f *facts) bool {
		return col != t.Expiry && col != t.Epoch && !f.key && !f.chooses && len(acquired(f)) > 0 && f.matches && len(f.counted) == 0 && !f.state()
	}, func(f *facts) []Evidence { return []Evidence{acquired(f)[0], f.equal[0]} })
	if t.Holder == "" {
		// Several candidates: the one a takeover's SET names (a key is
		// never set by an UPDATE).
		pick(Holder, func(col string, f *facts) bool {
			return col != t.Expiry && col != t.Epoch && !f.key && !f.chooses && f.setUpdate && f.matches && len(f.counted) == 0 && !f.state()
		}, func(f *facts) []Evidence { return []Evidence{acquired(f)[0], f.equal[0]} })
	}
	if t.Holder != "" && t.Expiry != "" && !cols[t.Expiry].together[t.Holder] {
		// A holder's lease ends when its expiry says: a write that sets
		// the expiry sets the holder too (an acquisition) or names it
		// (a renewal). A time that no such write sets (a row's activity
		// stamp, bumped by whoever writes the row) is not the lease's
		// expiry, and the lease's own, compared nowhere in SQL, is not
		// known: without evidence, no expiry.
		t.Expiry = ""
		delete(t.Why, Expiry)
	}
	if t.Expiry != "" {
		f := cols[t.Expiry]
		if ev, ok := l.takeovers[name][t.Expiry]; ok {
			t.Takeover = &ev
		} else if ev, ok := l.idle[name][t.Expiry]; ok && len(f.cleared) > 0 {
			// Idle rows taken, and the time cleared by a release: the
			// time says that the row is held, which a pace never
			// undoes.
			t.Takeover = &ev
			t.Why[Expiry] = append(t.Why[Expiry], f.cleared[0])
		} else if ev, ok := l.reaped[name][t.Expiry]; ok {
			t.Takeover = &ev
		} else if c, ok := l.claims[name][t.Expiry]; ok && slices.ContainsFunc(c.set, func(col string) bool {
			// Who claims: a column set beside the time that is no time
			// (nothing compares it by order), no key and no state.
			g := cols[col]
			return col != t.Expiry && len(g.ordered) == 0 && !g.key && !g.chooses && !g.state() && len(g.counted) == 0
		}) {
			t.Takeover = &c.ev
		}
		// A heartbeat: compared with a time an interval away, or set to
		// the clock itself by the write that sets the holder (an
		// acquisition stamps when the lease began: an end set to now
		// would have passed at once).
		t.Heartbeat = len(f.setFromIv) == 0 && (f.ivOrdered || t.Holder != "" && f.clockWith[t.Holder])
	}
	if sw, ok := l.liveness[name][t.Expiry]; ok && t.Expiry != "" && t.Holder == "" && t.Epoch == "" {
		// A liveness row: its holder is its key, which the heartbeat
		// tests, and its expiry the heartbeat that the sweep judges.
		// The heartbeat names its row by the key: WHERE controller = $2,
		// or an upsert's conflict key set from a parameter.
		f := cols[sw.key]
		named := f != nil && (f.matches || sw.joined && f.key && len(f.setInsert) > 0)
		if named && sw.key != t.Expiry && len(f.counted) == 0 {
			t.Holder = sw.key
			if f.matches {
				t.Why[Holder] = []Evidence{sw.ev, f.equal[0]}
			} else {
				t.Why[Holder] = []Evidence{sw.ev, f.setInsert[0]}
			}
			if !sw.joined {
				// A sweep judges the time by a cutoff: the time is a
				// heartbeat, unless a write adds an interval to it.
				t.Heartbeat = len(cols[t.Expiry].setFromIv) == 0
			}
		}
	}
	if r, ok := l.renewals[name][t.Expiry]; ok && t.Expiry != "" {
		t.Renewal, t.RenewedBy = &r.ev, r.named
	}
	t.Lease = t.Expiry != "" && (t.Holder != "" || t.Epoch != "" || t.Takeover != nil || t.Renewal != nil)
	return t
}

// ddl records the keys that a CREATE TABLE declares.
func (l *learner) ddl(cs *pg_query.CreateStmt) {
	if cs.Relation == nil {
		return
	}
	table := cs.Relation.Relname
	key := func(con *pg_query.Constraint) bool {
		return con != nil && (con.Contype == pg_query.ConstrType_CONSTR_PRIMARY || con.Contype == pg_query.ConstrType_CONSTR_UNIQUE) && con.WhereClause == nil
	}
	for _, elt := range cs.TableElts {
		if col := elt.GetColumnDef(); col != nil {
			for _, c := range col.Constraints {
				if key(c.GetConstraint()) {
					f := l.col(table, col.Colname)
					f.key, f.ddlKey = true, true
				}
			}
		}
		if con := elt.GetConstraint(); key(con) {
			for _, k := range con.Keys {
				f := l.col(table, k.GetString_().GetSval())
				f.key, f.ddlKey = true, true
			}
		}
	}
}

// lapsed says what time write x (an UPDATE, or an INSERT … ON CONFLICT)
// takes the rows whose col has passed by (col < now(), $3 >= col),
// anywhere in it: in its condition, or in a subquery on the same table
// that chooses its rows; notTime if it takes none. A renewal compares the
// other way, and so does a write that compares col with set, the time it
// sets: it only moves col forward.
func lapsed(x *pg_query.Node, rel *pg_query.RangeVar, col string, set *pg_query.Node) timeKind {
	found := notTime
	names := map[string]bool{rel.Relname: true}
	if rel.Alias != nil {
		names[rel.Alias.Aliasname] = true
	}
	pgsql.Walk(x, func(y *pg_query.Node) bool {
		col0, time0, ok := earlierLater(y.GetAExpr()) // col0 < time0
		if !ok {
			return found == notTime
		}
		for _, side := range [][2]*pg_query.Node{{col0, time0}} {
			parts := timeColumn(side[0])
			if len(parts) == 0 || parts[len(parts)-1] != col || len(parts) > 2 {
				continue
			}
			if len(parts) == 2 && !names[parts[0]] {
				continue
			}
			if !sameParam(side[1], set) {
				found = timeOf(side[1])
			}
		}
		return found == notTime
	})
	return found
}

// timeColumn returns the column that e names, e being a column or
// COALESCE(column, default): compared by order, COALESCE(triggered_at,
// TO_TIMESTAMP(0)) <= now() - interval compares the column, a time not yet
// set counting as long passed.
func timeColumn(e *pg_query.Node) []string {
	if c := e.GetCoalesceExpr(); c != nil && len(c.Args) > 0 {
		e = c.Args[0]
	}
	return pgsql.Ident(e)
}

// sameParam reports whether a and b are the same parameter, maybe cast: a
// write that sets a time only where it is older than the one it sets
// (SET seen = $1 WHERE seen <= $1) moves it forward; it takes nothing over.
func sameParam(a, b *pg_query.Node) bool {
	param := func(e *pg_query.Node) *pg_query.ParamRef {
		for e.GetTypeCast() != nil {
			e = e.GetTypeCast().Arg
		}
		return e.GetParamRef()
	}
	pa, pb := param(a), param(b)
	return pa != nil && pb != nil && pa.Number == pb.Number
}

// equalities returns the columns that the conditions of x (its WHERE and
// those of its subqueries) test for equality with a parameter as a plain
// conjunct, not in one arm of an OR.
func equalities(x *pg_query.Node) []string {
	var out []string
	pgsql.Walk(x, func(y *pg_query.Node) bool {
		var where *pg_query.Node
		switch {
		case y.GetUpdateStmt() != nil:
			where = y.GetUpdateStmt().WhereClause
		case y.GetSelectStmt() != nil:
			where = y.GetSelectStmt().WhereClause
		default:
			return true
		}
		for _, c := range pgsql.Conjuncts(where) {
			ae := c.GetAExpr()
			if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "=" {
				continue
			}
			for _, side := range [][2]*pg_query.Node{{ae.Lexpr, ae.Rexpr}, {ae.Rexpr, ae.Lexpr}} {
				if parts := pgsql.Ident(side[0]); len(parts) > 0 && pgsql.IsParam(side[1]) {
					out = append(out, parts[len(parts)-1])
				}
			}
		}
		return true
	})
	return out
}

// targets returns the assignments of a SET list, a multi-column
// assignment ((a, b) = ($1, $2)) resolved column by column.
func targets(list []*pg_query.Node) []assignment {
	var out []assignment
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || rt.Name == "" {
			continue
		}
		val := rt.Val
		if m := val.GetMultiAssignRef(); m != nil {
			val = nil
			if row := m.Source.GetRowExpr(); row != nil && int(m.Colno) >= 1 && int(m.Colno) <= len(row.Args) {
				val = row.Args[m.Colno-1]
			}
		}
		if val != nil {
			out = append(out, assignment{col: rt.Name, val: val, loc: int(rt.Location)})
		}
	}
	return out
}

// conflictTargets returns the assignments of an INSERT's ON CONFLICT …
// DO UPDATE SET, with EXCLUDED.col read as the value that the INSERT
// proposed for col (SET expires_at = EXCLUDED.expires_at sets it from
// the INSERT's now() + interval).
func conflictTargets(in *pg_query.InsertStmt) []assignment {
	as := targets(in.OnConflictClause.TargetList)
	proposed := make(map[string]*pg_query.Node)
	for _, a := range insertValues(in) {
		if _, ok := proposed[a.col]; !ok {
			proposed[a.col] = a.val
		}
	}
	for i, a := range as {
		if parts := pgsql.Ident(a.val); pgsql.IsExcluded(a.val) && proposed[parts[1]] != nil {
			as[i].val = proposed[parts[1]]
		}
	}
	return as
}

// insertValues returns the columns an INSERT sets with the values of its
// VALUES rows, or of its SELECT's target list.
func insertValues(in *pg_query.InsertStmt) []assignment {
	sel := in.SelectStmt.GetSelectStmt()
	if sel == nil {
		return nil
	}
	var rows [][]*pg_query.Node
	for _, r := range sel.ValuesLists {
		rows = append(rows, r.GetList().GetItems())
	}
	if len(rows) == 0 && len(sel.TargetList) > 0 {
		ctes := make(map[string]*pg_query.SelectStmt)
		for _, c := range in.GetWithClause().GetCtes() {
			if cte := c.GetCommonTableExpr(); cte != nil && cte.Ctequery.GetSelectStmt() != nil {
				ctes[cte.Ctename] = cte.Ctequery.GetSelectStmt()
			}
		}
		var row []*pg_query.Node
		for _, t := range sel.TargetList {
			row = append(row, throughCTEs(ctes, sel, t.GetResTarget().GetVal(), 0))
		}
		rows = append(rows, row)
	}
	var out []assignment
	for _, row := range rows {
		for i, c := range in.Cols {
			rt := c.GetResTarget()
			if rt == nil || i >= len(row) || row[i] == nil {
				continue
			}
			out = append(out, assignment{col: rt.Name, val: row[i], loc: int(rt.Location)})
		}
	}
	return out
}

// throughCTEs follows v, a value of sel's target list, through the common
// table expressions it is read from (INSERT … SELECT ti.expires FROM
// to_insert ti, with to_insert selecting $3::timestamptz AS expires), to
// the expression that computes it; v itself where it is read from
// anything else.
func throughCTEs(ctes map[string]*pg_query.SelectStmt, sel *pg_query.SelectStmt, v *pg_query.Node, depth int) *pg_query.Node {
	parts := pgsql.Ident(v)
	if len(parts) == 0 || len(parts) > 2 || depth > len(ctes) {
		return v
	}
	col := parts[len(parts)-1]
	for _, f := range sel.FromClause {
		rv := f.GetRangeVar()
		if rv == nil || ctes[rv.Relname] == nil {
			continue
		}
		if len(parts) == 2 && parts[0] != rv.Relname && (rv.Alias == nil || parts[0] != rv.Alias.Aliasname) {
			continue
		}
		if len(parts) == 1 && len(sel.FromClause) > 1 {
			return v // which of them: unknown
		}
		from := ctes[rv.Relname]
		for _, t := range from.TargetList {
			rt := t.GetResTarget()
			name := rt.GetName()
			if name == "" {
				if p := pgsql.Ident(rt.GetVal()); len(p) > 0 {
					name = p[len(p)-1]
				}
			}
			if name == col {
				return throughCTEs(ctes, from, rt.GetVal(), depth+1)
			}
		}
	}
	return v
}

// Relations maps each name that raw's relations go by (their names and
// aliases) to the relation's name.
func Relations(raw *pg_query.RawStmt) map[string]string {
	rels := make(map[string]string)
	aliases := make(map[string]bool)
	add := func(rv *pg_query.RangeVar) {
		if rv == nil {
			return
		}
		// A name that is an alias stays one: FOR UPDATE OF i names the
		// alias as a relation of its own.
		if !aliases[rv.Relname] {
			rels[rv.Relname] = rv.Relname
		}
		if rv.Alias != nil {
			rels[rv.Alias.Aliasname] = rv.Relname
			aliases[rv.Alias.Aliasname] = true
		}
	}
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		add(x.GetRangeVar())
		add(x.GetInsertStmt().GetRelation())
		add(x.GetUpdateStmt().GetRelation())
		add(x.GetDeleteStmt().GetRelation())
		return true
	})
	return rels
}

func uniq(rels map[string]string) []string {
	var out []string
	for _, r := range rels {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// timeKind is what time a value is.
type timeKind int

const (
	notTime     timeKind = iota
	dbClock              // now(), clock_timestamp(), CURRENT_TIMESTAMP
	param                // a parameter: maybe a time the process chose
	dbClockPlus          // a database clock plus or minus an amount
	paramPlus            // a parameter plus or minus an amount
)

func (k timeKind) String() string {
	return [...]string{"", "the database clock", "a parameter", "the database clock plus an interval", "a parameter plus an interval"}[k]
}

// timeOf says what time v is: a database clock or a parameter, maybe cast,
// maybe the first argument of coalesce or greatest, maybe plus or minus
// an amount.
func timeOf(v *pg_query.Node) timeKind {
	if v == nil {
		return notTime
	}
	if tc := v.GetTypeCast(); tc != nil {
		if !isTimeType(tc.TypeName) {
			return notTime // $1::uuid is no time, whatever the process passes
		}
		return timeOf(tc.Arg)
	}
	if ae := v.GetAExpr(); ae != nil && ae.Kind == pg_query.A_Expr_Kind_AEXPR_OP && len(ae.Name) == 1 {
		switch ae.Name[0].GetString_().GetSval() {
		case "+", "-":
			for _, side := range []*pg_query.Node{ae.Lexpr, ae.Rexpr} {
				switch timeOf(side) {
				case dbClock, dbClockPlus:
					return dbClockPlus
				case param, paramPlus:
					if isInterval(other(ae, side)) {
						return paramPlus
					}
				}
			}
		}
		return notTime
	}
	if c := v.GetCoalesceExpr(); c != nil && len(c.Args) > 0 {
		best := notTime
		for _, a := range c.Args {
			best = max(best, timeOf(a))
		}
		return best
	}
	if v.GetParamRef() != nil {
		return param
	}
	if sv := v.GetSqlvalueFunction(); sv != nil {
		switch sv.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
			pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return dbClock
		}
	}
	if fc := v.GetFuncCall(); fc != nil && len(fc.Funcname) > 0 {
		switch fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval() {
		case "now", "clock_timestamp", "statement_timestamp", "transaction_timestamp":
			return dbClock
		case "timezone":
			// now() AT TIME ZONE 'UTC': the same instant, written in a zone.
			if len(fc.Args) == 2 {
				return timeOf(fc.Args[1])
			}
		}
	}
	return notTime
}

func other(ae *pg_query.A_Expr, side *pg_query.Node) *pg_query.Node {
	if side == ae.Lexpr {
		return ae.Rexpr
	}
	return ae.Lexpr
}

// isInterval reports whether v is an amount of time: an interval literal or
// cast, make_interval, a product with one, or a parameter.
// isTimeType reports whether a cast to tn leaves a point in time.
func isTimeType(tn *pg_query.TypeName) bool {
	names := tn.GetNames()
	if len(names) == 0 {
		return false
	}
	switch names[len(names)-1].GetString_().GetSval() {
	case "timestamptz", "timestamp", "date", "time", "timetz":
		return true
	}
	return false
}

func isInterval(v *pg_query.Node) bool {
	found := false
	pgsql.Walk(v, func(x *pg_query.Node) bool {
		if tc := x.GetTypeCast(); tc != nil {
			for _, n := range tc.TypeName.GetNames() {
				if n.GetString_().GetSval() == "interval" {
					found = true
				}
			}
		}
		if fc := x.GetFuncCall(); fc != nil && len(fc.Funcname) > 0 && fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval() == "make_interval" {
			found = true
		}
		return !found
	})
	return found || pgsql.IsParam(v)
}

// counts reports whether v adds to col (col + 1).
func counts(v *pg_query.Node, col string) bool {
	ae := v.GetAExpr()
	if ae == nil || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "+" {
		return false
	}
	for _, side := range []*pg_query.Node{ae.Lexpr, ae.Rexpr} {
		if parts := pgsql.Ident(side); len(parts) > 0 && parts[len(parts)-1] == col {
			return true
		}
	}
	return false
}

// fromSequence reports whether v is taken from a sequence or a random
// function: a value that never comes back.
func fromSequence(v *pg_query.Node) bool {
	if tc := v.GetTypeCast(); tc != nil {
		v = tc.Arg
	}
	fc := v.GetFuncCall()
	if fc == nil || len(fc.Funcname) == 0 {
		return false
	}
	switch strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()) {
	case "nextval", "gen_random_uuid", "uuid_generate_v4", "random", "txid_current", "pg_current_xact_id":
		return true
	}
	return false
}
