// Package fence defines the fence rule: in a lease package, the SQL that a
// write sends must carry a fence that the database checks, under a row lock,
// with the database's clock.
package fence

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/lease"
	"github.com/leaseguard/leaseguard/analyzer/sqlcall"
)

// Name is the rule's name: its analyzer name, flag prefix, diagnostic
// category and //leaseguard:allow name.
const Name = "fence"

const doc = `check that writes in a lease package carry a locked fence on the database clock

The guard works only where the database rejects a stale write: each write to
a guarded table must carry a fence, an EXISTS subquery or a join on the lease
table that tests the holder, the epoch (equal to a parameter) and expiry
against the database clock, under a row lock that a takeover waits for. The
rule reads the SQL that a lease package sends with PostgreSQL's own parser
and reports: writes without a fence, or with a fence that misses a test;
fences without a row lock (with a suggested fix where the edit is
mechanical); now() in a fence after earlier statements of the transaction;
lease-table updates that set or test expiry with a parameter instead of the
database clock; fenced writes whose rows affected are not compared before
commit; deletes from the lease table; and SQL that does not parse.

SQL is read from constants and their concatenations, fmt.Sprintf with a
constant format, unexported fields and package variables assigned only
such values, //go:embed files, and parameters of functions that only the
package calls. A part that is not constant stands in as an identifier (a
table name); a text that then does not parse is not checked.`

// New returns the fence analyzer, with its flags bound to cfg.Fence.
// leaseAnalyzer is the analyzer from lease.New on the same cfg.
func New(cfg *config.Config, leaseAnalyzer *analysis.Analyzer) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:     Name,
		Doc:      doc,
		URL:      "https://github.com/leaseguard/leaseguard#fence",
		Requires: []*analysis.Analyzer{leaseAnalyzer, lazyssa.Analyzer},
	}
	cfg.Flags(Name, &a.Flags)
	a.Run = func(pass *analysis.Pass) (any, error) {
		res := pass.ResultOf[leaseAnalyzer].(*lease.Result)
		if !res.Lease {
			return nil, nil
		}
		// Flags are parsed, and checked, before the first run: the
		// settings are final and valid here.
		f := cfg.Fence
		info := pass.ResultOf[lazyssa.Analyzer].(*lazyssa.SSA).Get()
		c := &checker{pass: pass, rep: res.Reporter(pass, Name), cfg: f}
		c.run(info)
		c.rep.Finish()
		return nil, nil
	}
	return a
}

type checker struct {
	pass *analysis.Pass
	rep  *lease.Reporter
	cfg  config.Fence

	texts  *texts
	parses map[string]*parsed    // each text parsed once
	consts map[string][]ast.Expr // string constants' declarations by value
	// constExprs are string constants' declarations by object.
	constExprs map[*types.Const]ast.Expr
	names      *names
	seen       map[string]bool // reports made: a statement reached twice reports once
}

// site is one call that executes SQL.
type site struct {
	call  ssa.CallInstruction
	fn    *types.Func // the SQL method
	texts []text
}

func (c *checker) run(info *buildssa.SSA) {
	c.parses = make(map[string]*parsed)
	c.seen = make(map[string]bool)
	funcs := lazyssa.Funcs(info)
	c.texts = newTexts(info.Pkg, c.pass.Files, funcs, c.pass.Fset, c.pass.TypesInfo)
	c.constExprs, c.consts = constDecls(c.pass)

	// 1. Every SQL call, and the texts it may send.
	var sites []*site
	for _, fn := range info.SrcFuncs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if s := c.site(instr); s != nil {
					sites = append(sites, s)
				}
			}
		}
	}

	// 2. The lease table and its keys, from all the SQL the package has.
	c.names = c.learn(sites)

	// 3. Each statement of each text at each call.
	for _, s := range sites {
		fenced := false
		for _, t := range s.texts {
			fenced = c.checkText(s, t) || fenced
		}
		if fenced {
			c.checkRows(s)
		}
	}
}

func (c *checker) site(instr ssa.Instruction) *site {
	call, ok := instr.(ssa.CallInstruction)
	if !ok || c.skipped(call.Pos()) {
		return nil
	}
	m := sqlcall.Callee(call.Common())
	if m == nil {
		return nil
	}
	v := sqlcall.Text(call.Common(), m)
	if v == nil {
		return nil
	}
	ts, ok := c.texts.of(v)
	if !ok {
		return nil // not recoverable: not guessed at
	}
	return &site{call: call, fn: m, texts: ts}
}

func (c *checker) parse(sql string) *parsed {
	p, ok := c.parses[sql]
	if !ok {
		p = parse(sql)
		c.parses[sql] = p
	}
	return p
}

// checkText checks every statement of t as sent by s, and reports whether
// any of them is a fenced write.
func (c *checker) checkText(s *site, t text) (fenced bool) {
	p := c.parse(t.sql)
	if p.err != nil {
		if t.exact { // with a placeholder in it, the failure may be ours
			c.report(s, t, problem{off: p.errorOffset(), msg: "SQL does not parse: " + p.describe(t.sql)})
		}
		return false
	}
	first := c.firstInTx(s)
	for i, raw := range p.stmts {
		st := c.names.checkStmt(p, raw, first && i == 0)
		for _, pr := range st.problems {
			c.report(s, t, pr)
		}
		fenced = fenced || st.fenced
	}
	return fenced
}

// firstInTx reports whether s may be the first statement of its
// transaction: no earlier SQL call in the same function runs on the same
// transaction or batch (a batch is one implicit transaction).
func (c *checker) firstInTx(s *site) bool {
	recv := sqlcall.Receiver(s.call.Common())
	if recv == nil || !isTxLike(recv.Type()) {
		return true
	}
	for _, b := range s.call.Parent().Blocks {
		for _, instr := range b.Instrs {
			other, ok := instr.(ssa.CallInstruction)
			if !ok || other == s.call || sqlcall.Callee(other.Common()) == nil || sqlcall.Receiver(other.Common()) != recv {
				continue
			}
			if precedes(other, s.call) {
				return false
			}
		}
	}
	return true
}

// isTxLike reports whether t is a transaction or a batch: a type named Tx
// or Batch, as pgx, pgxpool and database/sql name them.
func isTxLike(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	return ok && (named.Obj().Name() == "Tx" || named.Obj().Name() == "Batch")
}

// precedes reports whether a runs before b on every path to b.
func precedes(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() {
		return slices.Index(a.Block().Instrs, a) < slices.Index(b.Block().Instrs, b)
	}
	return a.Block().Dominates(b.Block())
}

// report reports pr, found in text t at s: at the argument that chose the
// text, with the place in the SQL's source as related information and a
// fix there when pr has one.
func (c *checker) report(s *site, t text, pr problem) {
	at := t.at
	if at == nil {
		at = c.sqlArg(s)
	} else if c.skipped(at.Pos()) {
		return // a test passed the text to a helper of the package
	}
	d := analysis.Diagnostic{Pos: s.call.Pos(), Message: pr.msg}
	if at != nil {
		d.Pos, d.End = at.Pos(), at.End()
	}
	if pos, ok := c.locate(at, t, pr.off); ok {
		d.Related = []analysis.RelatedInformation{{Pos: pos, Message: "in this SQL"}}
		if pr.fix != nil {
			if fixPos, ok := c.locate(at, t, pr.fix.off); ok {
				d.SuggestedFixes = []analysis.SuggestedFix{{Message: pr.fix.msg,
					TextEdits: []analysis.TextEdit{{Pos: fixPos, End: fixPos, NewText: []byte(pr.fix.text)}}}}
			}
		}
	}
	key := fmt.Sprintf("%d %d %s", d.Pos, d.End, d.Message)
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.rep.Report(d)
}

// sqlArg returns the syntax of s's SQL text argument.
func (c *checker) sqlArg(s *site) ast.Expr {
	ce := c.texts.calls[s.call.Common().Pos()]
	i := sqlcall.SQLParam(s.fn.Signature())
	if ce == nil || i < 0 || i >= len(ce.Args) {
		return nil
	}
	return ce.Args[i]
}

// skipped reports whether pos is in a generated file or a test file. Tests
// set up on purpose the states that the rule forbids (an expired lease, a
// stolen row, an unfenced baseline for a benchmark); the rule checks the
// code that ships.
func (c *checker) skipped(pos token.Pos) bool {
	f := lease.File(c.pass, pos)
	return f != nil && (ast.IsGenerated(f) || strings.HasSuffix(c.pass.Fset.File(pos).Name(), "_test.go"))
}

// learn finds the lease tables (named by setting, or the tables that the
// package's renewals update) and which of them have the epoch in a unique
// key, from every statement the package sends, the files it embeds, and
// its string constants that create tables or indexes.
func (c *checker) learn(sites []*site) *names {
	n := &names{
		holder:   strings.ToLower(cmp.Or(c.cfg.HolderColumn, config.DefaultHolderColumn)),
		epoch:    strings.ToLower(cmp.Or(c.cfg.EpochColumn, config.DefaultEpochColumn)),
		expiry:   strings.ToLower(cmp.Or(c.cfg.ExpiryColumn, config.DefaultExpiryColumn)),
		leases:   make(map[string]bool),
		epochKey: make(map[string]bool),
	}
	if len(c.cfg.Tables) > 0 {
		n.guarded = make(map[string]bool)
		for _, t := range c.cfg.Tables {
			n.guarded[strings.ToLower(t)] = true
		}
	}
	var all []*pg_query.RawStmt
	add := func(sql string) {
		if p := c.parse(sql); p.err == nil {
			all = append(all, p.stmts...)
		}
	}
	for _, s := range sites {
		for _, t := range s.texts {
			add(t.sql)
		}
	}
	for _, sql := range c.texts.embeds {
		add(sql)
	}
	for sql := range c.consts {
		if strings.Contains(strings.ToLower(sql), "create") {
			add(sql)
		}
	}
	if c.cfg.Table != "" {
		table := strings.ToLower(c.cfg.Table)
		if i := strings.LastIndexByte(table, '.'); i >= 0 {
			table = table[i+1:] // relations are matched by name
		}
		n.leases[table] = true
	} else {
		for _, raw := range all {
			if u := raw.Stmt.GetUpdateStmt(); u != nil && n.isRenewal(u) {
				n.leases[u.Relation.Relname] = true
			}
		}
		if len(n.leases) == 0 {
			n.leases[config.DefaultLeaseTable] = true
		}
	}
	for _, raw := range all {
		n.learnKeys(raw)
	}
	return n
}

// isRenewal reports whether u has a renewal's shape: it sets the expiry
// column and tests the holder column.
func (n *names) isRenewal(u *pg_query.UpdateStmt) bool {
	sets := false
	for _, t := range u.TargetList {
		sets = sets || t.GetResTarget().GetName() == n.expiry
	}
	if !sets || u.Relation == nil {
		return false
	}
	t := newTests(n, u.Relation)
	t.add(u.WhereClause)
	return t.holder
}

// constDecls returns the expression that declares each string constant of
// the package, and the same by value.
func constDecls(pass *analysis.Pass) (map[*types.Const]ast.Expr, map[string][]ast.Expr) {
	byObj := make(map[*types.Const]ast.Expr)
	byValue := make(map[string][]ast.Expr)
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, name := range vs.Names {
					obj, _ := pass.TypesInfo.Defs[name].(*types.Const)
					if obj == nil || obj.Val().Kind() != constant.String {
						continue
					}
					s := constant.StringVal(obj.Val())
					byObj[obj] = vs.Values[i]
					byValue[s] = append(byValue[s], vs.Values[i])
				}
			}
		}
	}
	return byObj, byValue
}
