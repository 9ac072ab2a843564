package fence

// This file learns the lease schema from what the package sends, embeds
// and declares: the lease tables, their keys, and the guarded tables.

import (
	"cmp"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// learn finds the lease tables (named by setting, or the tables that the
// package's statements use as leases: they set the holder and the
// expiry), which of them have the epoch in a unique key and which have
// their epoch set, and the guarded tables named by setting, from every
// statement the package sends, the files it embeds, and its string
// constants that create tables or indexes.
func (c *checker) learn(sites []*site) *names {
	n := &names{
		def: columns{
			holder: pgsql.Identifier(cmp.Or(c.cfg.HolderColumn, config.DefaultHolderColumn)),
			epoch:  pgsql.Identifier(cmp.Or(c.cfg.EpochColumn, config.DefaultEpochColumn)),
			expiry: pgsql.Identifier(cmp.Or(c.cfg.ExpiryColumn, config.DefaultExpiryColumn)),
		},
		cols:         make(map[string]columns),
		leases:       make(map[string]bool),
		guarded:      make(map[string]bool),
		epochKey:     make(map[string]bool),
		epochCounted: make(map[string]bool),
		keyed:        make(map[string]bool),
		queued:       make(map[string]bool),
		renewedBy:    make(map[string][]string),
		display:      c.display,
		column:       c.displayColumn,
	}
	for _, t := range c.cfg.Tables {
		for _, name := range c.texts.Tables(t, pgsql.QualifiedName) {
			n.guarded[name] = true
		}
	}
	var all []*pg_query.RawStmt
	add := func(sql string) {
		if p := c.parses.Parse(sql); p.Err == nil {
			all = append(all, p.Stmts...)
		}
	}
	for _, s := range sites {
		for _, t := range s.texts {
			add(t.SQL)
		}
	}
	for _, sql := range c.texts.Embeds() {
		add(sql)
	}
	for _, sql := range c.texts.Consts() {
		if strings.Contains(strings.ToLower(sql), "create") {
			add(sql)
		}
	}
	goName := false
	for _, t := range c.cfg.Table {
		for _, name := range c.texts.Tables(t, pgsql.RelationName) {
			n.leases[name] = true
		}
		goName = goName || config.GoName(t)
	}
	for _, raw := range all {
		pgsql.Walk(raw, func(x *pg_query.Node) bool {
			// A table named at run time, unless the setting names the
			// Go field that holds one: its statements say whether it is
			// a lease table.
			if rv, ok := n.leaseShape(x); ok && (len(c.cfg.Table) == 0 || sqltext.IsPlaceholder(rv.Relname) && !goName) {
				n.leases[rv.Relname] = true
			}
			return true
		})
	}
	// The tables whose statements show a lease's shape, whatever their
	// columns are called, unless the setting names the lease tables.
	if len(c.cfg.Table) == 0 {
		for _, t := range c.schema.Leases() {
			n.leases[t.Name] = true
		}
	}
	if len(n.leases) == 0 {
		n.leases[config.DefaultLeaseTable] = true
		n.fallback = true
		for _, raw := range all {
			pgsql.Walk(raw, func(x *pg_query.Node) bool {
				for _, rv := range []*pg_query.RangeVar{x.GetRangeVar(), x.GetInsertStmt().GetRelation(),
					x.GetUpdateStmt().GetRelation(), x.GetDeleteStmt().GetRelation()} {
					if rv.GetRelname() == config.DefaultLeaseTable {
						n.fallback = false
					}
				}
				return n.fallback
			})
		}
	}
	// Each lease table's columns: by setting, else as its statements
	// show them, else the defaults.
	for name := range n.leases {
		t := c.schema.Tables[name]
		if t == nil || !t.Lease && len(c.cfg.Table) == 0 {
			continue // found by the default names' shape
		}
		// A role that the statements do not show is played by the
		// column of the default name where they use one; an inferred
		// lease table that has none has no such column.
		col := func(set, inferred, def string) string {
			switch {
			case set != "":
				return pgsql.Identifier(set)
			case inferred != "":
				return inferred
			case t.Lease && !t.Uses(def):
				return ""
			}
			return def
		}
		cols := columns{
			holder: col(c.cfg.HolderColumn, t.Holder, config.DefaultHolderColumn),
			epoch:  col(c.cfg.EpochColumn, t.Epoch, config.DefaultEpochColumn),
			expiry: col(c.cfg.ExpiryColumn, t.Expiry, config.DefaultExpiryColumn),
		}
		// A heartbeat is what the statements show of the expiry they
		// show, whatever names it.
		cols.heartbeat = t.Heartbeat && cols.expiry == t.Expiry
		n.cols[name] = cols
		if cols.expiry == t.Expiry {
			n.renewedBy[name] = t.RenewedBy
		}
	}
	// A queue's rows are inserted unclaimed and claimed by an UPDATE;
	// a lock table's rows are inserted by their holder.
	enqueued, holderInserted := make(map[string]bool), make(map[string]bool)
	for _, raw := range all {
		n.learnKeys(raw)
		pgsql.Walk(raw, func(x *pg_query.Node) bool {
			if u := x.GetUpdateStmt(); u != nil && n.isLease(u.Relation) && counts(n.of(u.Relation.Relname).epoch, u.TargetList) {
				n.epochCounted[u.Relation.Relname] = true
			}
			if i := x.GetInsertStmt(); i != nil && n.isLease(i.Relation) && i.OnConflictClause != nil {
				if counts(n.of(i.Relation.Relname).epoch, i.OnConflictClause.TargetList) {
					n.epochCounted[i.Relation.Relname] = true
				}
				if setsColumn(i.Cols, n.of(i.Relation.Relname).holder) {
					n.keyed[i.Relation.Relname] = true // an acquisition by key
				}
			}
			if i := x.GetInsertStmt(); i != nil && n.isLease(i.Relation) {
				switch h := n.of(i.Relation.Relname).holder; {
				case setsColumn(i.Cols, h):
					holderInserted[i.Relation.Relname] = true // an acquisition by INSERT: a lock's row
				case h != "" && len(i.Cols) > 0 && i.OnConflictClause == nil:
					enqueued[i.Relation.Relname] = true // an item enqueued, to be claimed
				}
			}
			return true
		})
	}
	for t := range enqueued {
		n.queued[t] = !holderInserted[t]
	}
	return n
}

// leaseShape reports whether x is a statement that treats its table as a
// lease table, whatever the table is called: an UPDATE that sets the
// expiry and tests the holder (a renewal), or sets both (a takeover), or an
// INSERT that sets both (an acquisition). Of a table named at run time,
// less is asked: any write that sets the holder or the expiry, or tests
// the holder or the epoch in its own WHERE, treats it as the lease row.
func (n *names) leaseShape(x *pg_query.Node) (*pg_query.RangeVar, bool) {
	var rel *pg_query.RangeVar
	var sets []*pg_query.Node
	var where *pg_query.Node
	switch {
	case x.GetUpdateStmt() != nil:
		u := x.GetUpdateStmt()
		rel, sets, where = u.Relation, u.TargetList, u.WhereClause
	case x.GetInsertStmt() != nil:
		i := x.GetInsertStmt()
		rel, sets = i.Relation, i.Cols
		if oc := i.OnConflictClause; oc != nil {
			sets = append(slices.Clip(sets), oc.TargetList...)
		}
	case x.GetDeleteStmt() != nil:
		d := x.GetDeleteStmt()
		rel, where = d.Relation, d.WhereClause
	default:
		return nil, false
	}
	if rel == nil {
		return nil, false
	}
	t := newTests(n, rel)
	t.c = n.def
	t.add(where)
	holder, expiry := setsColumn(sets, n.def.holder), setsColumn(sets, n.def.expiry)
	if sqltext.IsPlaceholder(rel.Relname) {
		return rel, holder || expiry || t.holder || t.epoch
	}
	if x.GetDeleteStmt() != nil {
		return nil, false
	}
	return rel, expiry && (holder || t.holder)
}

// counts reports whether assignments add to the epoch (epoch = epoch + 1):
// a counter, which a deleted row starts again. An epoch taken from the
// clock or a sequence, or kept as it was, does not restart.
func counts(epoch string, targets []*pg_query.Node) bool {
	for _, t := range targets {
		if rt := t.GetResTarget(); rt != nil && rt.Name == epoch && adds(epoch, rt.Val) {
			return true
		}
	}
	return false
}

// adds reports whether val adds to the epoch column (epoch + 1).
func adds(epoch string, val *pg_query.Node) bool {
	if epoch == "" {
		return false
	}
	added := false
	pgsql.Walk(val, func(x *pg_query.Node) bool {
		ae := x.GetAExpr()
		if ae == nil || len(ae.Name) != 1 || ae.Name[0].GetString_().GetSval() != "+" {
			return true
		}
		for _, operand := range []*pg_query.Node{ae.Lexpr, ae.Rexpr} {
			if parts := pgsql.Ident(operand); len(parts) > 0 && parts[len(parts)-1] == epoch {
				added = true
			}
		}
		return !added
	})
	return added
}

// learnKeys records the lease tables on which raw (a CREATE TABLE, CREATE
// UNIQUE INDEX or ALTER TABLE ... ADD) makes the epoch part of a unique
// key: a primary key, a unique constraint, or a unique index that is
// neither partial nor on expressions. Only then does changing the epoch
// conflict with FOR KEY SHARE.
func (n *names) learnKeys(raw *pg_query.RawStmt) {
	stmt := raw.Stmt
	switch {
	case stmt.GetCreateStmt() != nil:
		cs := stmt.GetCreateStmt()
		if !n.isLease(cs.Relation) {
			return
		}
		for _, elt := range cs.TableElts {
			if col := elt.GetColumnDef(); col != nil && col.Colname == n.of(cs.Relation.Relname).epoch {
				for _, con := range col.Constraints {
					if isKey(con.GetConstraint()) {
						n.epochKey[cs.Relation.Relname] = true
					}
				}
			}
			n.learnConstraint(cs.Relation, elt.GetConstraint())
		}
		for _, con := range cs.Constraints {
			n.learnConstraint(cs.Relation, con.GetConstraint())
		}
	case stmt.GetIndexStmt() != nil:
		ix := stmt.GetIndexStmt()
		if !ix.Unique || ix.WhereClause != nil || !n.isLease(ix.Relation) {
			return
		}
		for _, p := range ix.IndexParams {
			if e := p.GetIndexElem(); e != nil && e.Expr == nil && e.Name == n.of(ix.Relation.Relname).epoch {
				n.epochKey[ix.Relation.Relname] = true
			}
		}
	case stmt.GetAlterTableStmt() != nil:
		at := stmt.GetAlterTableStmt()
		if !n.isLease(at.Relation) {
			return
		}
		for _, cmd := range at.Cmds {
			if c := cmd.GetAlterTableCmd(); c != nil && c.Subtype == pg_query.AlterTableType_AT_AddConstraint {
				n.learnConstraint(at.Relation, c.Def.GetConstraint())
			}
		}
	}
}

// learnConstraint records a table constraint that is a unique key
// including the epoch.
func (n *names) learnConstraint(rel *pg_query.RangeVar, con *pg_query.Constraint) {
	if !isKey(con) || con.WhereClause != nil {
		return
	}
	for _, k := range con.Keys {
		if k.GetString_().GetSval() == n.of(rel.Relname).epoch {
			n.epochKey[rel.Relname] = true
		}
	}
}

func isKey(con *pg_query.Constraint) bool {
	return con != nil && (con.Contype == pg_query.ConstrType_CONSTR_PRIMARY || con.Contype == pg_query.ConstrType_CONSTR_UNIQUE)
}
