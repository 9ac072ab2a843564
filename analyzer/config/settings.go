package config

import (
	"errors"
	"flag"
	"fmt"
	"go/token"
	"regexp"
	"strings"
)

// A setting is one flag -RULE.KEY, which is the settings key RULE: {KEY: ...}
// under golangci-lint. Every value a setting takes passes its check, whether
// it comes from a flag (whose Set checks it, so that a bad value stops the
// command before any analysis) or from decoded settings (Validate).
type setting struct {
	rule, key, usage string
	// One of:
	str     *string   // a single value; "" means the default
	list    *[]string // a comma separated list
	boolean *bool
	// check reports what is wrong with one value of str or list.
	check func(string) error
}

// settings returns every setting, bound to c's fields.
func (c *Config) settings() []setting {
	return []setting{
		{rule: "lease", key: "packages", list: (*[]string)(&c.Lease.Packages), check: checkPattern,
			usage: "comma-separated import-path patterns of packages to check as lease packages even without the directive"},
		{rule: "lease", key: "notes", boolean: &c.Lease.Notes,
			usage: "report a lease package that sends SQL but has no lease table the fence rule can find, once (the standalone command turns this on and does not count it as a finding)"},
		{rule: "lease", key: "explain", boolean: &c.Lease.Explain,
			usage: "report what the rules understood of each lease package (lease tables, columns and their evidence, guarded tables, SQL interfaces, SQL calls read and not read) as notes of category explain"},
		{rule: "imports", key: "ban", list: (*[]string)(&c.Imports.Ban), check: checkPrefix,
			usage: "comma-separated package path prefixes to ban besides the curated list"},
		{rule: "imports", key: "allow", list: (*[]string)(&c.Imports.Allow), check: checkPattern,
			usage: "comma-separated import-path patterns never reported; an allowed package cuts chains through it"},
		{rule: "imports", key: "strict", boolean: &c.Imports.Strict,
			usage: "also report imports that reach net/http, http2, grpc or a websocket library without using their client API"},
		{rule: "imports", key: "tests", boolean: &c.Imports.Tests,
			usage: "also check the imports of test files and external test packages"},
		{rule: "clock", key: "funcs", list: (*[]string)(&c.Clock.Funcs), check: checkFunc,
			usage: "comma-separated functions that read the clock besides the built-in ones, as pkg/path.Func or pkg/path.Type.Method"},
		{rule: "clock", key: "sql-interfaces", list: &c.Clock.SQLInterfaces, check: checkInterface,
			usage: "comma-separated interfaces whose methods execute SQL (those that take a context, or return an error or a database's rows, row or result), as pkg/path.Interface"},
		{rule: "fence", key: "table", list: (*[]string)(&c.Fence.Table), check: checkTable,
			usage: "the lease table, or the Go field or variable that holds its name at run time as pkg/path.Type.Field or pkg/path.Var; comma-separated when several tables hold leases with the same column names (default: the tables the package's statements show to hold leases, else " + DefaultLeaseTable + ")"},
		{rule: "fence", key: "tables", list: (*[]string)(&c.Fence.Tables), check: checkTable,
			usage: "comma-separated tables whose writes need a fence, besides those the package's SQL shows to need one; a table named at run time by the Go field or variable that holds its name"},
		{rule: "fence", key: "holder-column", str: &c.Fence.HolderColumn, check: checkColumn,
			usage: "the lease table's holder column (default: the column its statements show, else " + DefaultHolderColumn + ")"},
		{rule: "fence", key: "epoch-column", str: &c.Fence.EpochColumn, check: checkColumn,
			usage: "the lease table's epoch column (default: the column its statements show, else " + DefaultEpochColumn + ")"},
		{rule: "fence", key: "expiry-column", str: &c.Fence.ExpiryColumn, check: checkColumn,
			usage: "the lease table's expiry column (default: the column its statements show, else " + DefaultExpiryColumn + ")"},
	}
}

// A Setting describes one setting, for help: its flag is -Rule.Key, and
// its golangci-lint settings key is Key under Rule.
type Setting struct {
	Rule, Key, Usage string
	Bool             bool // a flag given bare, true or false
	List             bool // comma separated; a list in golangci-lint's settings
}

// Settings returns every setting, in the order of the settings table,
// rule by rule.
func Settings() []Setting {
	var out []Setting
	for _, s := range new(Config).settings() {
		out = append(out, Setting{Rule: s.rule, Key: s.key, Usage: s.usage, Bool: s.boolean != nil, List: s.list != nil})
	}
	return out
}

// Flags binds rule's settings to fs, as flags named by their keys (the
// driver prefixes them with the rule: -fence.table). Each flag checks its
// value when it is set.
func (c *Config) Flags(rule string, fs *flag.FlagSet) {
	for _, s := range c.settings() {
		switch {
		case s.rule != rule:
		case s.boolean != nil:
			fs.BoolVar(s.boolean, s.key, *s.boolean, s.usage)
		default:
			fs.Var(value{s}, s.key, s.usage)
		}
	}
}

// Validate reports every bad value, joined, each naming its setting as
// RULE.KEY. Values set through Flags were checked already; Validate is for
// settings decoded from elsewhere (golangci-lint's).
func (c *Config) Validate() error {
	var errs []error
	for _, s := range c.settings() {
		var vals []string
		switch {
		case s.str != nil && *s.str != "":
			vals = []string{*s.str}
		case s.list != nil:
			vals = *s.list
		}
		for _, v := range vals {
			if err := s.check(v); err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", s.rule, s.key, err))
			}
		}
	}
	return errors.Join(errs...)
}

// value is a setting as a flag.Value.
type value struct{ s setting }

func (v value) String() string {
	switch {
	case v.s.str != nil:
		return *v.s.str
	case v.s.list != nil:
		return strings.Join(*v.s.list, ",")
	}
	return "" // the zero value that flag.PrintDefaults makes
}

// Set checks s and stores it. A list is comma separated; spaces around
// entries and empty entries are dropped.
func (v value) Set(s string) error {
	if v.s.str != nil {
		s = strings.TrimSpace(s)
		if s != "" {
			if err := v.s.check(s); err != nil {
				return err
			}
		}
		*v.s.str = s
		return nil
	}
	list := splitList(s)
	for _, f := range list {
		if err := v.s.check(f); err != nil {
			return err
		}
	}
	*v.s.list = list
	return nil
}

// splitList splits a comma-separated list, dropping spaces around entries
// and empty entries.
func splitList(s string) []string {
	var list []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			list = append(list, f)
		}
	}
	return list
}

// checkPattern checks an import-path pattern, with ... wildcards.
func checkPattern(p string) error {
	switch {
	case p == "":
		return errors.New("empty pattern")
	case strings.ContainsAny(p, " \t\n\\\"'`"):
		return fmt.Errorf("%q is not an import path pattern", p)
	case strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//"):
		return fmt.Errorf("%q is not an import path pattern: empty path element", p)
	case p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%q is a relative pattern; give an import path", p)
	}
	return nil
}

// checkPrefix checks a package path prefix: an import path, no wildcard.
func checkPrefix(p string) error {
	if strings.Contains(p, "...") {
		return fmt.Errorf("%q: a ban is a path prefix and takes no ... wildcard", p)
	}
	return checkPattern(p)
}

// checkFunc checks a function name as the clock rule matches it:
// pkg/path.Func or pkg/path.Type.Method.
func checkFunc(f string) error {
	bad := func(why string) error {
		return fmt.Errorf("%q is not a function name: %s; want pkg/path.Func or pkg/path.Type.Method", f, why)
	}
	slash := strings.LastIndexByte(f, '/')
	path, last := f[:slash+1], f[slash+1:]
	// last is the package's last path element (which may hold dots
	// itself: yaml.v3), then one or two identifiers.
	elem, name, ok := strings.Cut(last, ".")
	switch {
	case strings.Contains(f, "..."):
		return bad("... is not a wildcard here")
	case !ok || elem == "":
		return bad("no package path")
	case checkPattern(path+elem) != nil:
		return bad("no package path")
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		// Earlier dots may belong to the package's last path element;
		// the final one or two parts must be identifiers.
		if i >= len(parts)-2 && !token.IsIdentifier(p) {
			return bad(fmt.Sprintf("%q is not a Go identifier", p))
		}
	}
	return nil
}

// sqlIdent is an SQL identifier: unquoted, or "quoted" (a quote inside
// doubled).
const sqlIdent = `(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")`

var (
	sqlName   = regexp.MustCompile(`^` + sqlIdent + `(?:\.` + sqlIdent + `)?$`)
	sqlColumn = regexp.MustCompile(`^` + sqlIdent + `$`)
)

// checkName checks a table name: an SQL identifier, or schema.identifier.
func checkName(n string) error {
	if !sqlName.MatchString(n) {
		return fmt.Errorf("%q is not an SQL name: want an identifier (unquoted, folded to lower case, or \"Quoted\", kept as written), or schema.identifier", n)
	}
	return nil
}

// GoName reports whether a table setting names the Go field or package
// variable that holds a table's name at run time (pkg/path.Type.Field or
// pkg/path.Var: it has a package path, so a slash) rather than the table.
func GoName(setting string) bool { return strings.Contains(setting, "/") }

// checkTable checks a table setting: an SQL name (see checkName), or the
// Go field or package variable that holds one.
func checkTable(n string) error {
	if !GoName(n) {
		return checkName(n)
	}
	slash := strings.LastIndexByte(n, '/')
	parts := strings.Split(n[slash+1:], ".")
	ok := len(parts) == 2 || len(parts) == 3
	for _, p := range parts[1:] {
		ok = ok && token.IsIdentifier(p)
	}
	if !ok || parts[0] == "" || strings.Contains(n, "...") {
		return fmt.Errorf("%q is not a Go field or variable: want pkg/path.Type.Field or pkg/path.Var, for a table named at run time", n)
	}
	return nil
}

// checkColumn checks a column name: one SQL identifier.
func checkColumn(n string) error {
	if !sqlColumn.MatchString(n) {
		return fmt.Errorf("%q is not a column name: want an SQL identifier, unquoted or \"Quoted\"", n)
	}
	return nil
}

// checkInterface checks an interface name as the clock rule matches it:
// pkg/path.Interface, a package path, a dot, an identifier.
func checkInterface(name string) error {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return fmt.Errorf("%q is not an interface name: want pkg/path.Interface", name)
	}
	path, id := name[:i], name[i+1:]
	if !token.IsIdentifier(id) {
		return fmt.Errorf("%q is not an interface name: %q is not an identifier; want pkg/path.Interface", name, id)
	}
	if strings.Contains(path, "...") {
		return fmt.Errorf("%q is not an interface name: ... is not a wildcard here; want pkg/path.Interface", name)
	}
	if path == "" {
		return fmt.Errorf("%q is not an interface name: no package path; want pkg/path.Interface", name)
	}
	if err := checkPattern(path); err != nil {
		return fmt.Errorf("%q is not an interface name: %w; want pkg/path.Interface", name, err)
	}
	return nil
}
