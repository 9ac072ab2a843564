package fence

import pg_query "github.com/pganalyze/pg_query_go/v6"

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
			if col := elt.GetColumnDef(); col != nil && col.Colname == n.epoch {
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
			if e := p.GetIndexElem(); e != nil && e.Expr == nil && e.Name == n.epoch {
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
		if k.GetString_().GetSval() == n.epoch {
			n.epochKey[rel.Relname] = true
		}
	}
}

func isKey(con *pg_query.Constraint) bool {
	return con != nil && (con.Contype == pg_query.ConstrType_CONSTR_PRIMARY || con.Contype == pg_query.ConstrType_CONSTR_UNIQUE)
}
