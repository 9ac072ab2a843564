// Package config holds leaseguard's settings: one struct that the analyzers'
// flags fill under go vet and the standalone driver, and that the
// golangci-lint plugin decodes from .golangci.yml, so that there is one
// configuration surface.
//
// A flag -RULE.NAME and a settings key RULE: {NAME: ...} are the same
// setting. Settings come only from flags and golangci-lint settings, never
// from a file the analyzers read on their own: go vet caches results by
// tool, flags and inputs, and a file read behind its back would leave stale
// results.
package config

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Config is every leaseguard setting.
type Config struct {
	// Lease selects lease packages beyond those that carry the
	// //leaseguard:lease directive.
	Lease Lease `json:"lease"`
	// Imports configures the imports rule.
	Imports Imports `json:"imports"`
	// Clock configures the clock rule.
	Clock Clock `json:"clock"`
	// Fence configures the fence rule.
	Fence Fence `json:"fence"`
}

// Fence configures the fence rule: which table holds the leases, what its
// columns are called, and which tables' writes need a fence.
type Fence struct {
	// Table is the lease table, an SQL name ("Quoted" kept as written,
	// else folded to lower case), or the Go field or variable that holds
	// its name at run time; several when the package keeps leases of one
	// shape (the same column names, below) in more than one table. Default
	// none: the tables that the package's statements show to hold leases
	// (see package leaseschema), and those that set the expiry and set or
	// test the holder by the column names below, else worker_leases. A
	// table named at run time is found by its statements unless a Go name
	// is given. Flag -fence.table, comma separated; in settings a string
	// or a list.
	Table Names `json:"table"`
	// Tables are guarded tables: writes to them need a fence, besides the
	// tables that the package's SQL shows to need one (fenced by another
	// write, or written with the epoch). Default none. Flag -fence.tables,
	// comma separated.
	Tables Names `json:"tables"`
	// HolderColumn is the lease table's column naming the holder. Default
	// "": the column the table's statements show, else holder. Flag
	// -fence.holder-column.
	HolderColumn string `json:"holder-column"`
	// EpochColumn is the lease table's fencing-token column. Default "":
	// the column the table's statements show, else epoch. Flag
	// -fence.epoch-column.
	EpochColumn string `json:"epoch-column"`
	// ExpiryColumn is the lease table's expiry timestamp column. Default
	// "": the column the table's statements show, else expires_at. Flag
	// -fence.expiry-column.
	ExpiryColumn string `json:"expiry-column"`
}

// The reference lease package's names, which the zero Fence settings mean.
const (
	DefaultLeaseTable   = "worker_leases"
	DefaultHolderColumn = "holder"
	DefaultEpochColumn  = "epoch"
	DefaultExpiryColumn = "expires_at"
)

// Clock configures the clock rule.
type Clock struct {
	// Funcs are functions that read the clock besides time.Now, time.Since,
	// time.Until and any Now() time.Time, as pkg/path.Func or
	// pkg/path.Type.Method. Default none. Flag -clock.funcs, comma separated.
	Funcs Patterns `json:"funcs"`
	// SQLInterfaces are interfaces whose methods execute SQL, as
	// pkg/path.Interface: a repository or query interface whose
	// implementation the checked package does not import. Of their
	// methods, and those of the interfaces they embed, those that take a
	// context, or return an error or a database's rows, row or result,
	// execute SQL, and every argument of a call of one counts as an SQL
	// argument; the others (Now() time.Time of an embedded clock) do not.
	// An interface whose doc comment carries //leaseguard:sql counts too.
	// Default none. Flag -clock.sql-interfaces, comma separated.
	SQLInterfaces []string `json:"sql-interfaces"`
}

// Lease configures how lease packages are found.
type Lease struct {
	// Packages are import-path patterns (with ... wildcards, as the go
	// command takes them) of packages to check as lease packages even
	// without the directive. Default none. Flag -lease.packages, comma
	// separated.
	Packages Patterns `json:"packages"`
	// Explain reports, for each lease package, what the rules understood
	// of it (the lease tables and their columns with the evidence for
	// each, the guarded tables and why, the interfaces taken to execute
	// SQL, and the SQL calls whose text was read and those whose text was
	// not), as notes of category explain. Default false. Flag
	// -lease.explain; the standalone command's -explain sets it.
	Explain bool `json:"explain"`
	// Notes reports, once, a lease package that sends SQL but in which the
	// fence rule found no lease table (none named, none that its
	// statements show), so that a run that checked no write says so.
	// Under go vet and golangci-lint a note is a finding like any other;
	// the standalone command turns notes on and does not count them as
	// findings. Default false. Flag -lease.notes.
	Notes bool `json:"notes"`
}

// Imports configures the imports rule.
type Imports struct {
	// Ban are package-path prefixes to ban in addition to the curated list
	// (major-version suffixes ignored, like the curated entries). Default
	// none. Flag -imports.ban, comma separated.
	Ban Patterns `json:"ban"`
	// Allow are import-path patterns of packages that are never reported:
	// an allowed package is not a finding when imported, and an allowed
	// package in the middle of a chain cuts the chain. Default none. Flag
	// -imports.allow, comma separated.
	Allow Patterns `json:"allow"`
	// Strict also reports imports, direct or through a chain, of net/http,
	// golang.org/x/net/http2, google.golang.org/grpc and the websocket
	// libraries where no package uses their client API (a metrics handler,
	// expvar, gRPC status codes, a websocket upgrader). Default false. Flag
	// -imports.strict.
	Strict bool `json:"strict"`
	// Tests also checks the imports of a lease package's test files and of
	// its external test package, which are not on the lease path (tests
	// reach net/http through testify, ginkgo and httptest). Default false:
	// only the package's own files are checked. Flag -imports.tests.
	Tests bool `json:"tests"`
}

// Default returns the default settings: no extra lease packages, the
// curated ban list alone, nothing allowed, not strict.
func Default() *Config { return &Config{} }

// Matcher reports whether an import path matches any of a list of
// patterns, with the go command's meaning of ...: it matches any string,
// and a trailing /... also matches the path before it (net/... matches net).
type Matcher struct{ re *regexp.Regexp }

// NewMatcher compiles patterns; a nil Matcher matches nothing.
func NewMatcher(patterns Patterns) *Matcher {
	if len(patterns) == 0 {
		return nil
	}
	alts := make([]string, len(patterns))
	for i, p := range patterns {
		q := regexp.QuoteMeta(p)
		if rest, ok := strings.CutSuffix(q, `/\.\.\.`); ok {
			q = rest + `(/\.\.\.)?`
		}
		alts[i] = strings.ReplaceAll(q, `\.\.\.`, `.*`)
	}
	return &Matcher{re: regexp.MustCompile(`^(?:` + strings.Join(alts, "|") + `)$`)}
}

// Match reports whether path matches.
func (m *Matcher) Match(path string) bool { return m != nil && m.re.MatchString(path) }

// Unmatched returns, in order, the patterns of ps that match none of
// paths: a setting that names packages a run does not have.
func (ps Patterns) Unmatched(paths []string) Patterns {
	var out Patterns
	for _, p := range ps {
		if !slices.ContainsFunc(paths, NewMatcher(Patterns{p}).Match) {
			out = append(out, p)
		}
	}
	return out
}

// Names is a list of SQL names (table, or schema.table), or of the Go
// fields and variables that hold them. In settings it is a list, or a
// string of comma-separated names.
type Names []string

// UnmarshalJSON decodes a list of names, or one string of comma-separated
// names (table: leases, as a single lease table is written).
func (n *Names) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return json.Unmarshal(b, (*[]string)(n))
	}
	*n = splitList(s)
	return nil
}

// Patterns is a list of import-path patterns (for -imports.ban, path
// prefixes; for -clock.funcs, function names).
type Patterns []string
