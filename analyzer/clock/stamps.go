package clock

import (
	"cmp"
	"go/types"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/internal/leaseschema"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// stamps tells a write that only stamps a row with the time from one
// whose time decides something: a clock value written into a table that
// none of the package's SQL judges by time (a schema-version row, an
// audit log) decides nothing, and is not reported. The evidence that a
// table's times matter is any of:
//
//   - a statement of the package compares a column of the table by order
//     (<, <=, >, >=, BETWEEN): rows are chosen by their times;
//   - the table is the lease table or a guarded table by setting
//     (-fence.table, else worker_leases; -fence.tables), or a lease table
//     by what the package's SQL does with it (see leaseschema);
//   - the write sets or tests a column named as the lease's holder or
//     expiry (-fence.holder-column, -fence.expiry-column, or their
//     defaults), or the holder or expiry column of a lease table that the
//     package's SQL shows.
//
// Only a write whose SQL text the package holds can be judged: a clock
// passed to a repository method, or a statement that does not parse, is
// reported as before.
type stamps struct {
	texts  *sqltext.Texts
	parses pgsql.Cache
	judged map[string]bool // relation names (and aliases resolved) that some statement compares by order
	cols   map[string]bool // the lease's holder and expiry column names
}

// onlyStamps reports whether a clock value in the arguments of call can
// only stamp rows (see stamps); false outside lease packages, where
// nothing is reported.
func (c *checker) onlyStamps(call *ssa.CallCommon) bool {
	return c.ssa != nil && c.stamps().only(call)
}

// sessionOnly reports whether call, which executes SQL, only changes its
// own session (see stamps.sessionOnly).
func (c *checker) sessionOnly(call *ssa.CallCommon) bool {
	return c.ssa != nil && c.stamps().sessionOnly(call)
}

// stamps returns the package's stamp judge, built on first use: most
// packages have no clock value reaching SQL at all.
func (c *checker) stamps() *stamps {
	if c.stampJudge != nil {
		return c.stampJudge
	}
	s := &stamps{
		parses: make(pgsql.Cache),
		judged: make(map[string]bool),
		cols: map[string]bool{
			pgsql.Identifier(cmp.Or(c.fence.HolderColumn, config.DefaultHolderColumn)): true,
			pgsql.Identifier(cmp.Or(c.fence.ExpiryColumn, config.DefaultExpiryColumn)): true,
		},
	}
	c.stampJudge = s
	s.texts = sqltext.New(c.ssa.Pkg, c.pass.Files, lazyssa.Funcs(c.ssa), c.pass.Fset, c.pass.TypesInfo)
	for _, fn := range c.ssa.SrcFuncs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				for _, p := range s.sent(call.Common()) {
					for _, raw := range p.Stmts {
						s.learn(raw)
					}
				}
			}
		}
	}
	// The lease and guarded tables by setting; one named by the Go field
	// that holds it stands as that field's placeholder, known now that
	// every text is recovered.
	leases := c.fence.Table
	if len(leases) == 0 {
		leases = config.Names{config.DefaultLeaseTable}
	}
	for _, t := range slices.Concat(leases, c.fence.Tables) {
		for _, name := range s.texts.Tables(t, pgsql.RelationName) {
			s.judged[name] = true
		}
	}
	for _, t := range c.pass.ResultOf[leaseschema.Analyzer].(*leaseschema.Package).Get().Leases() {
		s.judged[t.Name] = true
		for _, col := range []string{t.Holder, t.Expiry} {
			if col != "" {
				s.cols[col] = true
			}
		}
	}
	return s
}

// sent returns the parsed texts that call, an SQL method's call, may send.
func (s *stamps) sent(call *ssa.CallCommon) []*pgsql.Parsed {
	_, ts, ok := s.texts.Sent(call)
	if !ok {
		return nil
	}
	var ps []*pgsql.Parsed
	for _, t := range ts {
		ps = append(ps, s.parses.Parse(t.SQL))
	}
	return ps
}

// learn records the tables whose columns raw compares by order.
func (s *stamps) learn(raw *pg_query.RawStmt) {
	rels := leaseschema.Relations(raw)
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		ae := x.GetAExpr()
		if ae == nil || !ordered(ae) {
			return true
		}
		pgsql.Walk(ae, func(y *pg_query.Node) bool {
			parts := pgsql.Ident(y)
			switch {
			case len(parts) >= 2:
				q := parts[len(parts)-2]
				s.judged[cmp.Or(rels[q], q)] = true
			case len(parts) == 1:
				// Unqualified: any of the statement's relations.
				for _, r := range rels {
					s.judged[r] = true
				}
			}
			return true
		})
		return true
	})
}

// ordered reports whether ae compares by order.
func ordered(ae *pg_query.A_Expr) bool {
	switch ae.Kind {
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return true
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if len(ae.Name) == 1 {
			switch ae.Name[0].GetString_().GetSval() {
			case "<", "<=", ">", ">=":
				return true
			}
		}
	}
	return false
}

// only reports whether a clock value in the arguments of call, which
// executes SQL (directly, or through a function of the package or a
// helper that passes its parameters to SQL), can only stamp rows: every
// text that the call may send is known, parses, and holds only INSERT
// and UPDATE statements on tables without evidence that their times
// matter.
func (s *stamps) only(call *ssa.CallCommon) bool {
	ps := s.sent(call)
	if ps == nil {
		// A function that passes its parameters to SQL: the texts among
		// its arguments.
		for _, a := range call.Args {
			if !isString(a) {
				continue
			}
			if ts, ok := s.texts.Of(a); ok {
				for _, t := range ts {
					ps = append(ps, s.parses.Parse(t.SQL))
				}
			}
		}
	}
	return every(ps, s.stampsOnly)
}

// sessionOnly reports whether call, which executes SQL, can only change
// its own session (pgsql.SessionOnly): every text it may send is known,
// parses, and holds only such statements. A clock that decides whether it
// runs (an idle connection's cleanup of its temporary functions) decides
// no row.
func (s *stamps) sessionOnly(call *ssa.CallCommon) bool {
	return every(s.sent(call), pgsql.SessionOnly)
}

// every reports whether there are texts, each of them parses, and every
// statement of each satisfies ok.
func every(ps []*pgsql.Parsed, ok func(*pg_query.RawStmt) bool) bool {
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if p.Err != nil || len(p.Stmts) == 0 {
			return false
		}
		for _, raw := range p.Stmts {
			if !ok(raw) {
				return false
			}
		}
	}
	return true
}

// stampsOnly reports whether raw is an INSERT or UPDATE whose relations
// no statement of the package judges by time, and that names no lease
// column.
func (s *stamps) stampsOnly(raw *pg_query.RawStmt) bool {
	if raw.Stmt.GetInsertStmt() == nil && raw.Stmt.GetUpdateStmt() == nil {
		return false
	}
	rels := leaseschema.Relations(raw)
	if len(rels) == 0 {
		return false
	}
	for _, r := range rels {
		if s.judged[r] {
			return false
		}
	}
	lease := false
	pgsql.Walk(raw, func(x *pg_query.Node) bool {
		if rt := x.GetResTarget(); rt != nil && s.cols[rt.Name] {
			lease = true
		}
		if parts := pgsql.Ident(x); len(parts) > 0 && s.cols[parts[len(parts)-1]] {
			lease = true
		}
		return !lease
	})
	return !lease
}

// isString reports whether v is a string.
func isString(v ssa.Value) bool {
	b, ok := v.Type().Underlying().(*types.Basic)
	return ok && b.Kind() == types.String
}
