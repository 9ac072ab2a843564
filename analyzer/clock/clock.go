// Package clock defines the clock rule: in a lease package, the process
// clock must not decide a write.
package clock

import (
	"cmp"
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/internal/leaseschema"
	"github.com/leaseguard/leaseguard/analyzer/internal/postdom"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// Name is the rule's name: its analyzer name, flag prefix, diagnostic
// category and //leaseguard:allow name.
const Name = "clock"

// scope is where the rule reports, and exports facts from: not in test
// files, which set up on purpose a lease that expires by their own clock.
const scope = lease.NoTests

const doc = `check that the process clock does not decide a write in a lease package

Two processes' clocks disagree; the database has one. A fenced write must let
the database's clock decide whether the lease is still valid. In a lease
package, a wall-clock read (time.Now, time.Since, time.Until, a method or
function named Now that returns time.Time, a function named by -clock.funcs,
or a function in any package whose result derives from one) is reported when
its value reaches an argument or the SQL text of a call that executes SQL,
or decides a branch that controls whether such a call runs. A method of an
interface named by -clock.sql-interfaces, or whose doc comment carries
//leaseguard:sql, executes SQL with all its arguments when it takes a
context, or returns an error or a database's rows, row or result (Now of a
clock that the interface embeds does none of these); a struct argument
carries what its fields were set from. A call that is given a function
literal which executes SQL executes SQL: the callee is expected to run it.
The arguments of upper/db's query builder methods (Set, Where, And, a
collection's Insert) become SQL, and the call that sends the chain executes
it.

Values that feed only logs, metrics, latency measurements or errors are not
reported, nor a clock value that an INSERT or UPDATE only stamps into a table
whose times nothing in the package judges: no statement compares its columns
by order, it is not the lease table, and the write names no lease column.
Timers, tickers, time.Sleep, time.After and context deadlines schedule; they
do not decide, and are not clock reads. Test files are not checked: a test
sets up on purpose a lease that expires by its own clock.`

// ReturnsClock is the fact that a function's result derives from a clock
// read, so that helpers in other packages are seen through.
type ReturnsClock struct {
	Via string // the clock read it derives from, e.g. time.Now
}

// AFact marks ReturnsClock as a fact.
func (*ReturnsClock) AFact() {}

func (f *ReturnsClock) String() string { return "returns clock from " + f.Via }

// ExecutesSQL is the fact that a function executes SQL, and which of its
// parameters reach the arguments of that SQL.
type ExecutesSQL struct {
	Params uint64 // bit i: parameter i (the receiver first) reaches an SQL argument
}

// AFact marks ExecutesSQL as a fact.
func (*ExecutesSQL) AFact() {}

func (f *ExecutesSQL) String() string {
	var ps []string
	for i := range 64 {
		if f.Params&(1<<i) != 0 {
			ps = append(ps, fmt.Sprint(i))
		}
	}
	return "executes SQL with params [" + strings.Join(ps, " ") + "]"
}

// New returns the clock analyzer, with its flags bound to cfg.Clock.
// leaseAnalyzer is the analyzer from lease.New on the same cfg.
func New(cfg *config.Config, leaseAnalyzer *analysis.Analyzer) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      Name,
		Doc:       doc,
		URL:       "https://github.com/leaseguard/leaseguard/blob/main/docs/rules/clock.md",
		Requires:  []*analysis.Analyzer{leaseAnalyzer, lazyssa.Analyzer, leaseschema.Analyzer},
		FactTypes: []analysis.Fact{new(ReturnsClock), new(ExecutesSQL), new(SQLInterface)},
	}
	cfg.Flags(Name, &a.Flags)
	// Settings are final, and checked, before the first run (by the flags'
	// Set, or the plugin's Validate).
	funcs := sync.OnceValue(func() map[string]bool { return set(cfg.Clock.Funcs) })
	interfaces := sync.OnceValue(func() map[string]bool { return set(cfg.Clock.SQLInterfaces) })
	a.Run = func(pass *analysis.Pass) (any, error) {
		res := pass.ResultOf[leaseAnalyzer].(*lease.Result)
		c := &checker{pass: pass, extra: funcs(), interfaces: interfaces(), fence: cfg.Fence}
		c.markedInterfaces()
		build := pass.ResultOf[lazyssa.Analyzer].(*lazyssa.SSA)
		if res.Lease {
			if cfg.Lease.Explain {
				c.explained = make(map[*types.TypeName]token.Pos)
			}
			c.fieldFlow = true
			c.ssa = build.Production() // the rule checks no test files
			c.run(res, c.ssa)
			return nil, nil
		}
		// Facts only: no SSA where no fact can come from it, and none for
		// the functions that cannot give one. The standard library's clock
		// reads are time's own and its SQL calls database/sql's, which the
		// rule knows by name: it gives no fact worth its cost.
		if standard(pass) || !c.mayMatter() {
			return nil, nil
		}
		c.facts(build)
		return nil, nil
	}
	return a
}

// standard reports whether pass's package is in the standard library:
// in no module, and its path's first element has no dot.
func standard(pass *analysis.Pass) bool {
	if pass.Module != nil && pass.Module.Path != "" {
		return false
	}
	first, _, _ := strings.Cut(pass.Pkg.Path(), "/")
	return !strings.Contains(first, ".")
}

// set returns the names as a set.
func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// summary is what a function of this package does, as the fixpoint found it.
type summary struct {
	returns      *source // non-nil: the result derives from this clock read
	sql          bool    // executes SQL
	params       uint64  // parameters (then free variables) that reach SQL arguments
	wholes       uint64  // ... as themselves, not only by their fields
	name         string  // the first SQL call's name, for messages
	results      uint64  // parameters (then free variables) that its results derive from
	wholeResults uint64  // ... as themselves, not only by their fields
	// frees are, for a function literal, what it stores into each
	// variable it captures and into the fields of the struct that one
	// holds or points to: clock reads, and the parameters and captured
	// variables (as in results) that the stored values derive from.
	frees []labelled
}

type checker struct {
	pass  *analysis.Pass
	extra map[string]bool // -clock.funcs

	interfaces map[string]bool // -clock.sql-interfaces
	fence      config.Fence    // the lease table's names, for stamps

	// Under -lease.explain, in a lease package: the interfaces whose
	// calls were taken for SQL calls, and the first such call.
	explained map[*types.TypeName]token.Pos

	// In a lease package: its SSA, and what its SQL says of which tables'
	// times matter (built when a clock first reaches SQL).
	ssa        *buildssa.SSA
	stampJudge *stamps

	// fieldFlow follows values through fields: in lease packages, not in
	// the packages analysed for facts alone (see facts).
	fieldFlow bool

	sums  map[*ssa.Function]*summary
	local map[*ssa.Function]bool // the functions whose bodies the fixpoint analyses
	// Package-wide stores, so that a clock stored in a field (or a global)
	// in one function is seen where another function loads it.
	fields  map[fieldKey]labelled // clock bits only
	globals map[*ssa.Global]labelled
	frees   map[*ssa.FreeVar]labelled

	doms map[*ssa.Function]*postdom.Tree // built when a clock decides a branch

	// The fixpoint's worklist. A function is analysed again only when
	// something it read changed: the summary of a function of the package
	// it calls, or a field, global or free variable it loads.
	current *ssa.Function           // the function being analysed
	readers map[any][]*ssa.Function // who read each summary and store
	read    map[dependency]bool     // the pairs in readers
	queue   []*ssa.Function         // functions waiting to be analysed
	queued  map[*ssa.Function]bool  // the functions in queue
}

// A dependency is a function that read a summary (keyed by its
// *ssa.Function) or a store (a fieldKey, *ssa.Global or *ssa.FreeVar).
type dependency struct {
	key    any
	reader *ssa.Function
}

type fieldKey struct {
	strct *types.Struct
	index int
}

// run checks a lease package: every function is summarised, and the
// findings reported.
func (c *checker) run(res *lease.Result, info *buildssa.SSA) {
	findings := c.summarize(info)
	c.export()
	rep := res.Reporter(c.pass, Name, scope)
	// A clock read is reported once, however many calls it reaches or
	// decides: with the first of them in the message, and every further
	// one as a related line.
	slices.SortFunc(findings, func(a, b finding) int {
		return cmp.Or(cmp.Compare(a.src.pos, b.src.pos), cmp.Compare(a.at, b.at), cmp.Compare(a.what, b.what))
	})
	for i := 0; i < len(findings); {
		f := findings[i]
		d := analysis.Diagnostic{Pos: f.src.pos, Message: f.src.desc + " " + f.what}
		if f.at.IsValid() {
			d.Related = []analysis.RelatedInformation{{Pos: f.at, Message: "the SQL call"}}
		}
		said := map[finding]bool{{what: f.what, at: f.at}: true}
		for i++; i < len(findings) && findings[i].src.pos == f.src.pos; i++ {
			if g := findings[i]; g.at.IsValid() && !said[finding{what: g.what, at: g.at}] {
				said[finding{what: g.what, at: g.at}] = true
				d.Related = append(d.Related, analysis.RelatedInformation{Pos: g.at, Message: "also " + g.what})
			}
		}
		rep.Report(d)
	}
	rep.Finish()
	c.explain()
}

// summarize runs the dataflow over every function of info until nothing
// changes, and returns the findings: a helper may be declared after its
// caller, and a field stored in one method is read in another. Labels only
// grow, so it ends.
func (c *checker) summarize(info *buildssa.SSA) []finding {
	c.sums = make(map[*ssa.Function]*summary)
	c.fields = make(map[fieldKey]labelled)
	c.globals = make(map[*ssa.Global]labelled)
	c.frees = make(map[*ssa.FreeVar]labelled)
	c.doms = make(map[*ssa.Function]*postdom.Tree)
	c.readers = make(map[any][]*ssa.Function)
	c.read = make(map[dependency]bool)
	c.queued = make(map[*ssa.Function]bool)
	fns := lazyssa.Funcs(info)
	c.local = make(map[*ssa.Function]bool, len(fns))
	for _, fn := range fns {
		c.local[fn] = fn.Blocks != nil
		c.enqueue(fn)
	}
	found := make(map[*ssa.Function][]finding)
	for len(c.queue) > 0 {
		fn := c.queue[0]
		c.queue = c.queue[1:]
		delete(c.queued, fn)
		found[fn] = c.analyze(fn)
	}
	var findings []finding
	for _, fn := range fns {
		findings = append(findings, found[fn]...)
	}
	return findings
}

func (c *checker) enqueue(fn *ssa.Function) {
	if fn.Blocks != nil && !c.queued[fn] {
		c.queued[fn] = true
		c.queue = append(c.queue, fn)
	}
}

// reads records that the function being analysed read key: a summary or a
// store.
func (c *checker) reads(key any) {
	d := dependency{key, c.current}
	if !c.read[d] {
		c.read[d] = true
		c.readers[key] = append(c.readers[key], c.current)
	}
}

// changed queues the functions that read key again.
func (c *checker) changed(key any) {
	for _, fn := range c.readers[key] {
		c.enqueue(fn)
	}
}

// export exports the facts of the functions that other checked packages
// can call: exported, outside test files.
func (c *checker) export() {
	for fn, s := range c.sums {
		obj, ok := fn.Object().(*types.Func)
		if !ok || obj.Pkg() != c.pass.Pkg || !obj.Exported() || !scope.Covers(c.pass.Fset, obj.Pos()) {
			continue
		}
		if s.returns != nil && returnsValue(obj) {
			c.pass.ExportObjectFact(obj, &ReturnsClock{Via: rootDesc(s.returns.desc)})
		}
		if s.sql {
			c.pass.ExportObjectFact(obj, &ExecutesSQL{Params: s.params})
		}
	}
}

// returnsValue reports whether fn's first result is a value that a clock
// read can become (a time, a duration, a number, a string), not an object
// that holds one among its fields (cron.New's *Cron): such an object
// passed to SQL passes no time.
func returnsValue(fn *types.Func) bool {
	res := fn.Signature().Results()
	if res.Len() == 0 {
		return false
	}
	t := res.At(0).Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" {
		return true
	}
	_, basic := t.Underlying().(*types.Basic)
	return basic
}

// rootDesc returns the clock read a description starts from.
func rootDesc(desc string) string {
	root, _, _ := strings.Cut(readName(desc), " via ")
	return root
}

// readName returns a description without the function that returned the
// read.
func readName(desc string) string {
	read, _, _ := strings.Cut(desc, " (returned by ")
	return read
}

func (c *checker) summary(fn *ssa.Function) *summary {
	s := c.sums[fn]
	if s == nil {
		s = new(summary)
		c.sums[fn] = s
	}
	return s
}

// analyze runs the dataflow over fn to its own fixpoint, updates fn's
// summary and the package-wide stores, and returns its findings.
func (c *checker) analyze(fn *ssa.Function) []finding {
	if fn.Blocks == nil {
		return nil
	}
	c.current = fn
	f := &flow{c: c, fn: fn, vals: make(map[ssa.Value]labelled)}
	for i, p := range fn.Params {
		if i < 62 {
			f.vals[p] = labelled{l: labels(1) << i}
		}
	}
	// A free variable has the bit that follows the parameters': a function
	// literal's summary says which of the variables it captures reach SQL,
	// so that a function passing it to a call can map them back to its own
	// values (see flow.closureArgs).
	for j, fv := range fn.FreeVars {
		c.reads(fv)
		f.vals[fv] = c.frees[fv]
		if i := len(fn.Params) + j; i < 62 {
			f.vals[fv] = union(f.vals[fv], labelled{l: labels(1) << i})
		}
	}
	for again := true; again; {
		again = false
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if f.step(instr) {
					again = true
				}
			}
		}
	}
	return f.finish()
}

// mayMatter reports whether a package that is no lease package can give a
// fact: whether any identifier in it names a clock read, a method that
// executes SQL, or a function that a fact marks as returning a clock value
// or executing SQL. Facts derive only from those, so a package without one
// (most of any dependency graph) is not built into SSA at all.
func (c *checker) mayMatter() bool {
	for _, obj := range c.pass.TypesInfo.Uses {
		if fn, ok := obj.(*types.Func); ok && c.source(fn.Origin()) {
			return true
		}
	}
	return false
}
