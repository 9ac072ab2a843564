package fence

// This file says what the rule understood of a lease package, for
// -lease.explain: a user reading it knows why a run is silent.

import (
	"fmt"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer/internal/leaseschema"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
	"github.com/leaseguard/leaseguard/analyzer/lease"
)

// unread is an SQL call whose text the rule did not check, and why.
type unread struct {
	pos token.Pos
	why string
}

// guardedWhy is why a table's writes need a fence.
type guardedWhy struct {
	pos token.Pos // the write that shows it, or token.NoPos for a setting
	why string
}

// explain reports what the rule understood: the lease tables with their
// columns and the evidence for each, the guarded tables and why, and the
// SQL calls read and not read.
func (c *checker) explain(sites []*site) {
	pkgPos := token.NoPos
	for _, f := range c.pass.Files {
		if c.rep.Covers(f.Package) {
			pkgPos = f.Package
			break
		}
	}
	note := func(pos token.Pos, msg string, related []analysis.RelatedInformation) {
		if !pos.IsValid() {
			pos = pkgPos
		}
		c.pass.Report(analysis.Diagnostic{Pos: pos, Category: lease.ExplainCategory, Message: "explain: " + msg, Related: related})
	}

	var leases []string
	for l := range c.names.leases {
		leases = append(leases, l)
	}
	slices.Sort(leases)
	for _, l := range leases {
		cols := c.names.of(l)
		t := c.schema.Tables[l]
		var source string
		switch {
		case len(c.cfg.Table) > 0:
			source = "named by -fence.table"
		case t != nil && t.Lease:
			source = "inferred from its statements"
		default:
			source = "by the column names " + strings.Join([]string{cols.holder, cols.epoch, cols.expiry}, ", ")
		}
		var related []analysis.RelatedInformation
		pos := token.NoPos
		if t != nil {
			pos, related = c.roleEvidence(t)
			if t.Takeover != nil && t.Takeover.Pos.IsValid() {
				related = append(related, analysis.RelatedInformation{Pos: t.Takeover.Pos, Message: "takeover: " + c.spell(t.Takeover.Why)})
			}
			if t.Renewal != nil && t.Renewal.Pos.IsValid() {
				related = append(related, analysis.RelatedInformation{Pos: t.Renewal.Pos, Message: "renewal: " + c.spell(t.Renewal.Why)})
			}
		}
		expiry := c.column(cols.expiry, c.cfg.ExpiryColumn)
		if cols.heartbeat {
			expiry += " (a heartbeat: the lease lapses an interval after it)"
		}
		note(pos, fmt.Sprintf("%s (%s): holder: %s, epoch: %s, expiry: %s",
			leaseTable(c.display(l)), source, c.column(cols.holder, c.cfg.HolderColumn), c.column(cols.epoch, c.cfg.EpochColumn), expiry), related)
	}

	if c.names.fallback {
		c.explainNearLeases(note)
	}

	var guarded []string
	for g := range c.names.guarded {
		guarded = append(guarded, g)
	}
	slices.Sort(guarded)
	for _, g := range guarded {
		why := c.guardedWhy[g]
		if why.why == "" {
			why.why = "named by -fence.tables"
		}
		note(why.pos, fmt.Sprintf("the guarded table %s: %s", c.display(g), why.why), nil)
	}
	if len(guarded) == 0 {
		note(pkgPos, "no guarded table: no write of the package is fenced or carries the epoch, and -fence.tables names none, so no write is asked a fence", nil)
	}

	read := 0
	for _, s := range sites {
		if len(s.stmts) > 0 {
			read++
		}
	}
	note(pkgPos, fmt.Sprintf("%d SQL calls read, %d not", read, len(c.unread)), nil)
	for _, u := range c.partial {
		note(u.pos, u.why, nil)
	}
	for _, u := range c.unread {
		note(u.pos, "SQL call not read: "+u.why, nil)
	}
}

// explainNearLeases says, in a package where no lease table was found,
// which tables came closest: those whose statements show an expiry but
// not enough besides to hold leases (see leaseschema), with the evidence,
// so that a user who knows the table holds leases can name it.
func (c *checker) explainNearLeases(note func(token.Pos, string, []analysis.RelatedInformation)) {
	var near []*leaseschema.Table
	for _, t := range c.schema.Tables {
		if !t.Lease && t.Expiry != "" {
			near = append(near, t)
		}
	}
	slices.SortFunc(near, func(a, b *leaseschema.Table) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range near {
		var shown, missing []string
		for _, r := range roles {
			switch col := t.Column(r); {
			case col != "":
				shown = append(shown, fmt.Sprintf("%s `%s`", r, col))
			case r != leaseschema.Expiry:
				missing = append(missing, "no "+r.String())
			}
		}
		missing = append(missing, "no takeover", "no renewal")
		pos, related := c.roleEvidence(t)
		note(pos, fmt.Sprintf("%s is not taken for a lease table: its statements show %s, but %s; name it with -fence.table if it holds leases",
			tableNamed(c.display(t.Name), "table"), strings.Join(shown, " and "), strings.Join(missing, ", ")), related)
	}
}

// roles are a lease table's roles, in the order explanations give them.
var roles = []leaseschema.Role{leaseschema.Holder, leaseschema.Epoch, leaseschema.Expiry}

// roleEvidence returns the statements that show t's columns, role by role,
// as related information, and the first of their positions.
func (c *checker) roleEvidence(t *leaseschema.Table) (token.Pos, []analysis.RelatedInformation) {
	pos := token.NoPos
	var related []analysis.RelatedInformation
	for _, r := range roles {
		for _, ev := range t.Why[r] {
			if ev.Pos.IsValid() {
				related = append(related, analysis.RelatedInformation{Pos: ev.Pos, Message: r.String() + ": " + c.spell(ev.Why)})
				if !pos.IsValid() {
					pos = ev.Pos
				}
			}
		}
	}
	return pos, related
}

// explainForward records, for an SQL call at pos whose text is a
// parameter of its function (see sqltext.Forward), what was read of it:
// the package's own calls of the function that pass a text that can be
// read (read says whether any did), and not the others, nor what callers
// out of sight pass.
func (c *checker) explainForward(pos token.Pos, fw sqltext.Forward, read bool) {
	fn := fw.Param.Parent().RelString(c.pass.Pkg)
	for _, at := range fw.Missed {
		c.unread = append(c.unread, unread{at, fmt.Sprintf("the SQL text passed to %s is built at run time, or comes from outside the package", fn)})
	}
	switch {
	case fw.Calls == 0:
		c.unread = append(c.unread, unread{pos, fmt.Sprintf("its text is the parameter %s of %s, which its callers choose, and the package never calls %s directly", fw.Param.Name(), fn, fn)})
	case read && (fw.Outside || len(fw.Missed) > 0):
		msg := fmt.Sprintf("SQL call read for what the package's own calls of %s pass (%d of %d read)", fn, fw.Calls-len(fw.Missed), fw.Calls)
		if fw.Outside {
			msg += ": what callers outside the package, or through an interface, pass is not read"
		}
		c.partial = append(c.partial, unread{pos, msg})
	}
}

// column names a column for an explanation: "none", or the column, with
// "by setting" where a setting named it.
func (c *checker) column(name, setting string) string {
	switch {
	case name == "":
		return "none"
	case setting != "":
		return "`" + name + "` (by setting)"
	}
	if shown := c.displayColumn(name); shown != name {
		return shown
	}
	return "`" + name + "`"
}

// noteUnchecked notes, once at the package clause, a lease package that
// sends SQL but has no lease table: none named by setting, none that its
// statements show, and no statement on the default one; and no guarded
// table named by setting; nor does it call a function that fences a
// transaction (leasepkg's Fence). The rule then checked no write, and a
// silent run would look like a pass.
func (c *checker) noteUnchecked(sites []*site) {
	if len(sites) == 0 && len(c.unread) == 0 || len(c.cfg.Table) > 0 || len(c.cfg.Tables) > 0 || !c.names.fallback || c.callsFencer {
		return
	}
	for _, f := range c.pass.Files {
		if c.rep.Covers(f.Package) {
			c.rep.Report(analysis.Diagnostic{Pos: f.Package, End: f.Name.End(), Category: lease.NoteCategory,
				Message: "fence checked no write here: no lease table found (name it with -fence.table)"})
			return
		}
	}
}

// leaseTable names a lease table as display names it (see
// checker.display): "the lease table orders", "the lease table named by
// s.config.Table", "a lease table named at run time".
func leaseTable(display string) string { return tableNamed(display, "lease table") }

// tableNamed names a table as display names it, with noun for "table":
// "the lease table orders", "a table named at run time".
func tableNamed(display, noun string) string {
	if d, ok := strings.CutPrefix(display, "the table "); ok {
		return "the " + noun + " " + d
	}
	if d, ok := strings.CutPrefix(display, "a table "); ok {
		return "a " + noun + " " + d
	}
	return "the " + noun + " " + display
}

// spell writes the names in why, an inference's evidence, as the user
// wrote them: a name chosen at run time as the Go expression that chose
// it, in backquotes.
func (c *checker) spell(why string) string {
	words := strings.Split(why, " ")
	for i, w := range words {
		if expr, ok := c.texts.Expr(w); ok && expr != "" {
			words[i] = "`" + expr + "`"
		}
	}
	return strings.Join(words, " ")
}
