// Package fence defines the fence rule: in a lease package, the SQL that a
// write sends must carry a fence that the database checks, under a row lock,
// with the database's clock.
package fence

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/internal/leaseschema"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Name is the rule's name: its analyzer name, flag prefix, diagnostic
// category and //leaseguard:allow name.
const Name = "fence"

const doc = `check that a lease package's writes carry a locked database-clock fence

The guard works only where the database rejects a stale write. The rule
reads the SQL that a lease package sends with PostgreSQL's own parser. A
write to a guarded table (named by -fence.tables, fenced by another write
of the package, or written with the epoch) must carry a fence: an EXISTS
subquery or a join on the lease table, or a SELECT … FOR SHARE first in its
transaction, that tests the holder, the epoch and expiry against the
database clock, under a row lock that a takeover waits for. Renewals must
set and test expiry with the database clock; a release is not a renewal.
Fenced writes, renewals and takeovers must have their rows affected
compared, and a renewal's failure must be acted on, not only logged. A
lease row whose epoch is counted must not be deleted. SQL that
does not parse is reported, once per package for another database's SQL,
and a text too large or deep to parse safely is reported as such.

SQL is read from constants and their concatenations, fmt.Sprintf with a
constant format, unexported fields and package variables assigned only such
values, //go:embed files, parameters of functions that only the package
calls, and generated files such as sqlc's; and the statements that
upper/db's query builder chains send. A part that is not constant stands in
for the Go expression it came from (a table named at run time); the lease
table may be named by the Go field that holds its name.`

// New returns the fence analyzer, with its flags bound to cfg.Fence.
// leaseAnalyzer is the analyzer from lease.New on the same cfg.
func New(cfg *config.Config, leaseAnalyzer *analysis.Analyzer) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      Name,
		Doc:       doc,
		URL:       "https://github.com/leaseguard/leaseguard/blob/main/docs/rules/fence.md",
		Requires:  []*analysis.Analyzer{leaseAnalyzer, lazyssa.Analyzer, leaseschema.Analyzer},
		FactTypes: []analysis.Fact{new(Renews), new(Fences)},
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
		info := pass.ResultOf[lazyssa.Analyzer].(*lazyssa.SSA).Production() // the rule checks no test files
		c := &checker{pass: pass, rep: res.Reporter(pass, Name, lease.NoTests), cfg: f,
			schema: pass.ResultOf[leaseschema.Analyzer].(*leaseschema.Package).Get(), guardedWhy: make(map[string]guardedWhy)}
		sites := c.run(info)
		c.flush()
		if cfg.Lease.Notes {
			c.noteUnchecked(sites)
		}
		if cfg.Lease.Explain {
			c.explain(sites)
		}
		c.rep.Finish()
		return nil, nil
	}
	return a
}

type checker struct {
	pass *analysis.Pass
	rep  *lease.Reporter
	cfg  config.Fence

	texts   *sqltext.Texts
	parses  pgsql.Cache
	names   *names
	schema  *leaseschema.Schema // what the package's statements show of its tables
	dialect bool                // the note on another database's SQL was made
	// importedRenewers are the concrete methods of other packages that a
	// Renews fact marks, by name, found when first needed.
	importedRenewers map[string][]*types.Func
	held             map[held]*analysis.Diagnostic
	order            []held // the keys of held, in the order found
	// callsFencer reports that the package calls a function that fences
	// a transaction (see Fences): its writes were checked against that.
	callsFencer bool

	// For -lease.explain: the SQL calls not read, and why each guarded
	// table is one.
	unread     []unread
	partial    []unread // SQL calls read only as the package's own calls fill their text
	guardedWhy map[string]guardedWhy
}

// site is one call that executes SQL.
type site struct {
	call  ssa.CallInstruction
	fn    *types.Func // the SQL method
	texts []sqltext.Text
	first bool // it may be the first statement of its transaction

	stmts []sent
}

// sent is one statement of one text that a site may send.
type sent struct {
	text sqltext.Text
	st   *statement
}

func (c *checker) run(info *buildssa.SSA) []*site {
	c.parses = make(pgsql.Cache)
	funcs := lazyssa.Funcs(info)
	c.texts = sqltext.New(info.Pkg, c.pass.Files, funcs, c.pass.Fset, c.pass.TypesInfo)

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
		s.first = c.firstInTx(s)
		for _, t := range s.texts {
			p := c.parses.Parse(t.SQL)
			if p.Err != nil {
				c.reportParse(s, t, p)
				continue
			}
			for i, raw := range p.Stmts {
				s.stmts = append(s.stmts, sent{t, c.names.checkStmt(p, raw, s.first && i == 0)})
			}
		}
	}

	// 4. Fences taken once for a transaction, by a statement or by a
	// function that fences the transaction it is given, and the guarded
	// tables.
	txFences, fencesTx := c.txFences(sites)
	if c.calledFencers(funcs, sites, c.fencers(funcs, sites), txFences) {
		fencesTx, c.callsFencer = true, true
	}
	fencesTx = fencesTx || c.locksLeaseRows(sites)
	for _, s := range sites {
		for _, ss := range s.stmts {
			for _, w := range ss.st.writes {
				if w.best == nil {
					w.best = txFences[s]
				}
				// A write that reads the lease row only for its expiry
				// (a sweep of lapsed rows) fences nothing: only a read
				// that tests the holder or the epoch is evidence.
				if w.best != nil && (w.best.holder || w.best.epoch || w.best.maybe) || w.setsEpoch {
					if !c.names.guarded[w.target.Relname] {
						why := "a write of the package fences it"
						if w.best == nil {
							why = "a write of the package fills it with the epoch"
						}
						c.guardedWhy[w.target.Relname] = guardedWhy{pos: s.call.Pos(), why: why}
					}
					c.names.guarded[w.target.Relname] = true
				}
			}
		}
	}

	// 5. What is wrong, and the rows affected that must be checked.
	for _, s := range sites {
		fenced, renews, completes := false, false, false
		byCaller := fencesTx && c.fencedByCaller(s) // a caller may have fenced its transaction
		for _, ss := range s.stmts {
			for _, pr := range ss.st.problems {
				c.report(s, ss.text, pr)
			}
			renews = renews || ss.st.lease == renewal
			completes = completes || ss.st.completes
			for _, w := range ss.st.writes {
				if !c.names.guards(w.target) {
					continue // without evidence, nothing is said
				}
				if w.best == nil && byCaller {
					continue
				}
				for _, pr := range c.names.checkWrite(w) {
					c.report(s, ss.text, pr)
				}
				fenced = fenced || (w.best != nil && w.best != txFences[s])
			}
		}
		switch {
		case fenced:
			c.checkRows(s, "fenced write", "a fence that refuses the write affects no rows and returns no error")
		case renews && byCaller:
			// A renewal on a transaction that its caller may have locked
			// the lease row in: the lock holds the row as read, so the
			// renewal matches it, and the read told the caller the rest.
		case renews:
			c.checkRows(s, "renewal", "a renewal or takeover that matches no row returns no error, so the holder never learns it lost the lease")
		case completes:
			c.checkRows(s, "completion", "a completion whose claim was lost matches no row and returns no error, so the work is counted done while another holder may run it again")
		}
	}

	// 6. Renewals whose failure the holder does not act on.
	c.checkRenewalFailures(funcs, c.renewers(funcs, sites), sites)
	return sites
}

func (c *checker) site(instr ssa.Instruction) *site {
	call, ok := instr.(ssa.CallInstruction)
	if !ok || c.skipped(call.Pos()) {
		return nil
	}
	m, ts, ok := c.texts.Sent(call.Common())
	fw, forwards := c.texts.Forwarder(call.Common())
	if forwards {
		c.explainForward(call.Pos(), fw, ok)
	}
	if !ok {
		if sqlcall.Executes(call.Common()) != nil && !forwards {
			c.unread = append(c.unread, unread{call.Pos(), "its text is built at run time, or comes from outside the package"})
		}
		return nil // no SQL, or not recoverable: not guessed at
	}
	return &site{call: call, fn: m, texts: ts}
}

// reportParse reports a text that was not parsed: too large or deep to
// check, written for another database (once, and only in a package none
// of whose SQL is PostgreSQL: a package that speaks both dialects, as
// migration tools do, needs no note), or not valid SQL. A text with a placeholder in it may fail for want of the part
// that the placeholder stands for, and is not reported.
func (c *checker) reportParse(s *site, t sqltext.Text, p *pgsql.Parsed) {
	var tc *pgsql.TooComplexError
	switch {
	case errors.As(p.Err, &tc):
		c.unread = append(c.unread, unread{s.call.Pos(), p.Describe()})
		c.report(s, t, problem{off: p.ErrorOffset(), msg: p.Describe() + ": the fence rule checks none of it"})
	case !t.Exact:
		c.unread = append(c.unread, unread{s.call.Pos(), "a part built at run time leaves it unparsable"})
	case p.Dialect() != "":
		c.unread = append(c.unread, unread{s.call.Pos(), "it is not PostgreSQL (" + p.Dialect() + ")"})
		if !c.dialect && !c.anyParsed() {
			c.dialect = true
			c.report(s, t, problem{off: p.ErrorOffset(), msg: fmt.Sprintf("SQL is not PostgreSQL (%s): the fence rule reads PostgreSQL only, and checks none of this package's SQL", p.Dialect())})
		}
	default:
		c.unread = append(c.unread, unread{s.call.Pos(), "it does not parse"})
		c.report(s, t, problem{off: p.ErrorOffset(), msg: "SQL does not parse: " + p.Describe()})
	}
}

// anyParsed reports whether any text the package sends is PostgreSQL.
func (c *checker) anyParsed() bool {
	for _, p := range c.parses {
		if p.Err == nil {
			return true
		}
	}
	return false
}

// txFences returns, for each site that runs on a transaction after a
// statement of the same transaction that reads the lease row as a fence
// does (SELECT … FOR SHARE as the transaction's first statement), that
// fence: under READ COMMITTED, its row lock holds until commit, so every
// later write of the transaction is fenced by it.
//
// any reports whether the package takes such a fence anywhere.
func (c *checker) txFences(sites []*site) (fenced map[*site]*fence, any bool) {
	out := make(map[*site]*fence)
	for _, s := range sites {
		var f *fence
		for _, ss := range s.stmts {
			if ss.st.fence != nil {
				f = ss.st.fence
			}
		}
		if f == nil {
			continue
		}
		any = true
		recv := sqlcall.Receiver(s.call.Common())
		if recv == nil || !sqlcall.Transaction(recv.Type()) {
			continue
		}
		for _, later := range sites {
			if later != s && sqlcall.Receiver(later.call.Common()) == recv && precedes(s.call, later.call) {
				if out[later] == nil {
					out[later] = f
				}
			}
		}
	}
	return out, any
}

// locksLeaseRows reports whether the package sends a SELECT that locks
// rows of a lease table (SELECT range_id FROM shards WHERE shard_id = $1
// FOR SHARE): a lock that its callers take first in a transaction and
// then compare the epoch it returns, in Go, fences the transaction's
// later writes, which may be the package's own.
func (c *checker) locksLeaseRows(sites []*site) bool {
	for _, s := range sites {
		for _, ss := range s.stmts {
			if ss.st.locksLease {
				return true
			}
		}
	}
	return false
}

// fencedByCaller reports whether s runs on a transaction that its function
// was given, as a parameter or in its receiver (directly, or through a
// method of the package that returns the handle the receiver holds): in a
// package that fences transactions, the caller may have.
func (c *checker) fencedByCaller(s *site) bool {
	recv := sqlcall.Receiver(s.call.Common())
	for {
		switch v := recv.(type) {
		case *ssa.Parameter:
			return true
		case *ssa.UnOp:
			recv = v.X
			continue
		case *ssa.FieldAddr:
			recv = v.X
			continue
		case *ssa.Call:
			// pdb.conn(): the transaction or the pool that pdb holds.
			if fn := v.Call.StaticCallee(); fn != nil && fn.Pkg == s.call.Parent().Pkg && fn.Signature.Recv() != nil && len(v.Call.Args) == 1 {
				recv = v.Call.Args[0]
				continue
			}
		}
		return false
	}
}

// firstInTx reports whether s may be the first statement of its
// transaction: no earlier SQL call in the same function runs on the same
// transaction or batch (a batch is one implicit transaction).
func (c *checker) firstInTx(s *site) bool {
	recv := sqlcall.Receiver(s.call.Common())
	if recv == nil || !sqlcall.Transaction(recv.Type()) {
		return true
	}
	for _, b := range s.call.Parent().Blocks {
		for _, instr := range b.Instrs {
			other, ok := instr.(ssa.CallInstruction)
			if !ok || other == s.call || sqlcall.Executes(other.Common()) == nil || sqlcall.Receiver(other.Common()) != recv {
				continue
			}
			if precedes(other, s.call) {
				return false
			}
		}
	}
	return true
}

// precedes reports whether a runs before b on every path to b.
func precedes(a, b ssa.Instruction) bool {
	if a.Parent() != b.Parent() {
		return false
	}
	if a.Block() == b.Block() {
		return slices.Index(a.Block().Instrs, a) < slices.Index(b.Block().Instrs, b)
	}
	return a.Block().Dominates(b.Block())
}

// sqlcName matches the header that sqlc writes into each query's constant.
var sqlcName = regexp.MustCompile(`^-- name: (\w+) (:\w+)`)

// report reports pr, found in text t at s: at the argument that chose the
// text, with the place in the SQL's source as related information and a
// fix there when pr has one.
func (c *checker) report(s *site, t sqltext.Text, pr problem) {
	at := t.At
	if at == nil {
		at = c.sqlArg(s)
	} else if c.skipped(at.Pos()) {
		return // a test passed the text to a helper of the package
	}
	d := analysis.Diagnostic{Pos: s.call.Pos(), Message: pr.msg}
	if at != nil {
		d.Pos, d.End = at.Pos(), at.End()
	}
	if pos, ok := c.texts.Locate(at, t, pr.off); ok {
		d.Related = []analysis.RelatedInformation{{Pos: pos, Message: "in this SQL"}}
		if pr.fix != nil {
			if fixPos, ok := c.texts.Locate(at, t, pr.fix.off); ok {
				d.SuggestedFixes = []analysis.SuggestedFix{{Message: pr.fix.msg,
					TextEdits: []analysis.TextEdit{{Pos: fixPos, End: fixPos, NewText: []byte(pr.fix.text)}}}}
			}
		}
	}
	if m := sqlcName.FindStringSubmatch(t.SQL); m != nil {
		pos := d.Pos
		if decl := c.texts.Decl(t.SQL); decl != nil {
			pos = decl.Pos()
		}
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: pos,
			Message: fmt.Sprintf("sqlc query %s (%s): change it in the .sql file that sqlc generates this from", m[1], m[2])})
	}
	c.hold(d)
}

// hold keeps d to be reported by flush. A finding reported again at the
// same place with the same message (one text among several that a
// variable may hold, each with the same problem) is one finding that
// points at each of its texts: its related information is added to the
// first's.
func (c *checker) hold(d analysis.Diagnostic) {
	key := held{d.Pos, d.End, d.Message}
	if first, ok := c.held[key]; ok {
		for _, r := range d.Related {
			if !slices.ContainsFunc(first.Related, func(q analysis.RelatedInformation) bool { return q.Pos == r.Pos && q.Message == r.Message }) {
				first.Related = append(first.Related, r)
			}
		}
		return
	}
	if c.held == nil {
		c.held = make(map[held]*analysis.Diagnostic)
	}
	c.held[key] = &d
	c.order = append(c.order, key)
}

// flush reports what hold kept, in the order it was found.
func (c *checker) flush() {
	for _, key := range c.order {
		c.rep.Report(*c.held[key])
	}
}

// held identifies a finding that hold keeps.
type held struct {
	pos, end token.Pos
	msg      string
}

// sqlArg returns the syntax of s's SQL text argument.
func (c *checker) sqlArg(s *site) ast.Expr {
	return c.texts.Arg(s.call.Common().Pos(), sqlcall.SQLParam(s.fn.Signature()))
}

// skipped reports whether pos is in a test file, which the rule does not
// report in (lease.NoTests): tests set up on purpose the states that the
// rule forbids (an expired lease, a stolen row, an unfenced baseline for a
// benchmark). Generated code is checked: sqlc's files hold the SQL that
// the program sends.
func (c *checker) skipped(pos token.Pos) bool { return !c.rep.Covers(pos) }

// display names a relation for a message: the Go expression that chose it
// at run time, its name quoted where PostgreSQL would need quotes, or its
// name.
func (c *checker) display(relname string) string {
	if expr, ok := c.texts.Expr(relname); ok {
		if expr == "" {
			return "a table named at run time"
		}
		return "the table named by " + expr
	}
	if relname != strings.ToLower(relname) {
		return `"` + strings.ReplaceAll(relname, `"`, `""`) + `"`
	}
	return relname
}

// displayColumn names a column as a message shows it: its name, or, for
// a name chosen at run time, the Go expression that chose it.
func (c *checker) displayColumn(col string) string {
	if expr, ok := c.texts.Expr(col); ok {
		if expr == "" {
			return "a column named at run time"
		}
		return "the column named by " + expr
	}
	return col
}
