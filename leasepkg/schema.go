package leasepkg

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// leaseColumns are the columns the package's statements read and write,
// with their types as format_type spells them. Every one must be NOT NULL.
var leaseColumns = []column{
	{"name", "text"},
	{"holder", "text"},
	{"epoch", "bigint"},
	{"expires_at", "timestamp with time zone"},
	{"term", "text"},
}

type column struct{ name, typ string }

// columnsSQL lists a table's columns: name, type, NOT NULL. $1 the table.
const columnsSQL = `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull
  FROM pg_attribute a
 WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`

// uniqueKeysSQL lists the key columns of a table's unique indexes that make
// their columns key columns for row locking: valid, not partial, not on
// expressions. PostgreSQL lets an update of any other column proceed beside
// a FOR KEY SHARE lock. One row per index, its key columns in order. $1 the
// table.
const uniqueKeysSQL = `SELECT array_agg(a.attname::text ORDER BY k.n)
  FROM pg_index i
 CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
 WHERE i.indrelid = to_regclass($1)
   AND i.indisunique AND i.indisvalid
   AND i.indpred IS NULL AND i.indexprs IS NULL
   AND k.n <= i.indnkeyatts
 GROUP BY i.indexrelid`

// querier is what the schema check needs of a pool, a connection or a
// transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// CheckSchema verifies that the lease table, and the session's default
// isolation level, are as the fence needs them: the columns with their
// types and NOT NULL, a unique index on the lease name alone, a unique
// index whose key columns include the epoch (so that an epoch change
// conflicts with a fenced write's FOR KEY SHARE whatever statement makes
// it), and the triggers that keep a lease name's epochs growing (refusing
// DELETE, TRUNCATE, a rename and an epoch moved back), each present,
// calling worker_leases_keep and enabled ALWAYS. A table that differs
// returns an error wrapping ErrSchema that says what differs; a
// default_transaction_isolation other than read committed (a transaction
// begun at that level cannot be fenced) one wrapping ErrIsolation. The
// tables that the lease guards are the caller's, and not checked. [Open] and [Manager.Migrate] call it; the
// context governs the catalog queries.
func (m *Manager) CheckSchema(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	return checkSchema(ctx, m.pool)
}

func checkSchema(ctx context.Context, q querier) error {
	problems, err := schemaProblems(ctx, q)
	if err != nil {
		return err
	}
	return schemaError(problems)
}

// schemaError is the error for problems, nil if there are none.
func schemaError(problems []problem) error {
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.msg
	}
	return fmt.Errorf("%w: %s", ErrSchema, strings.Join(msgs, "; "))
}

// problem is one way the schema differs from what the fence needs. added,
// if not empty, names a part that this version of the schema added and
// that is missing, which Migrate creates.
type problem struct {
	msg   string
	added string
}

// addedParts are the parts of the schema that this version added to the
// previous one, as problem.added names them.
var addedParts = []string{"worker_leases.term", "worker_leases_keep_rows", "worker_leases_no_truncate", "worker_leases_epoch_grows"}

// previousVersion says whether problems are exactly the parts that this
// version added, all missing: a schema that the previous version made,
// which Open accepts and Migrate brings up to date.
func previousVersion(problems []problem) bool {
	missing := map[string]bool{}
	for _, p := range problems {
		if p.added == "" {
			return false
		}
		missing[p.added] = true
	}
	for _, part := range addedParts {
		if !missing[part] {
			return false
		}
	}
	return true
}

// schemaProblems lists what is wrong with the schema, or returns an error
// wrapping ErrIsolation for the session's default isolation level.
func schemaProblems(ctx context.Context, q querier) ([]problem, error) {
	problems, err := checkTable(ctx, q, "worker_leases", leaseColumns)
	if err != nil {
		return nil, fmt.Errorf("check lease schema: %w", err)
	}
	if len(problems) > 0 && problems[0].msg == noLeaseTable {
		return problems, nil
	}
	p, err := checkGuards(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("check lease schema: %w", err)
	}
	problems = append(problems, p...)
	if len(problems) > 0 {
		return problems, nil
	}
	rows, err := q.Query(ctx, `SELECT current_setting('default_transaction_isolation')`)
	if err != nil {
		return nil, fmt.Errorf("check lease schema: %w", err)
	}
	iso, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("check lease schema: %w", err)
	}
	if iso != readCommittedName {
		return nil, fmt.Errorf("%w: default_transaction_isolation is %s, so a transaction begun at the default cannot be fenced", ErrIsolation, iso)
	}
	return nil, nil
}

// noLeaseTable is the problem of a database without the lease table.
const noLeaseTable = "table worker_leases does not exist (run Migrate)"

// guards are the triggers that keep epochs growing per lease name (see
// schema.sql): each must call worker_leases_keep, fire as its type says
// (pg_trigger.tgtype: 1 row, 2 before, 8 delete, 16 update, 32 truncate),
// and be enabled ALWAYS, so that session_replication_role = replica does
// not skip it.
var guards = []struct {
	name   string
	tgtype int
	what   string
}{
	{"worker_leases_keep_rows", 1 | 2 | 8, "refuses DELETE of a lease row, which would restart its epoch at 1"},
	{"worker_leases_no_truncate", 2 | 32, "refuses TRUNCATE of the lease table, which would restart every epoch at 1"},
	{"worker_leases_epoch_grows", 1 | 2 | 16, "refuses an UPDATE that renames a lease row, moves its epoch back or gives its epoch to another holder"},
}

// guardsSQL lists the lease table's triggers: name, type, whether enabled
// ALWAYS, and the function they call.
const guardsSQL = `SELECT t.tgname::text, t.tgtype::int, t.tgenabled = 'A', t.tgfoid::regproc::text
  FROM pg_trigger t
 WHERE t.tgrelid = to_regclass('worker_leases') AND NOT t.tgisinternal`

// checkGuards returns what is wrong with the triggers that keep epochs
// growing.
func checkGuards(ctx context.Context, q querier) ([]problem, error) {
	rows, err := q.Query(ctx, guardsSQL)
	if err != nil {
		return nil, err
	}
	type trigger struct {
		tgtype int
		always bool
		fn     string
	}
	have := map[string]trigger{}
	var name string
	var tr trigger
	_, err = pgx.ForEachRow(rows, []any{&name, &tr.tgtype, &tr.always, &tr.fn}, func() error {
		have[name] = tr
		return nil
	})
	if err != nil {
		return nil, err
	}
	var problems []problem
	for _, g := range guards {
		h, ok := have[g.name]
		switch {
		case !ok:
			problems = append(problems, problem{
				msg:   fmt.Sprintf("worker_leases has no trigger %s, which %s and reuse fencing tokens (run Migrate)", g.name, g.what),
				added: g.name,
			})
		case h.fn != "worker_leases_keep" || h.tgtype != g.tgtype:
			problems = append(problems, problem{msg: fmt.Sprintf("trigger %s on worker_leases is not the one Migrate makes (it %s, so that no epoch is reused)", g.name, g.what)})
		case !h.always:
			problems = append(problems, problem{msg: fmt.Sprintf("trigger %s on worker_leases is not enabled ALWAYS (ALTER TABLE worker_leases ENABLE ALWAYS TRIGGER %s): disabled or skipped it no longer %s, and epochs can be reused", g.name, g.name, g.what)})
		}
	}
	return problems, nil
}

// readCommitted is the isolation of the package's own transactions, whatever
// the session's default: a fence must read the lease row as it is now.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// readCommittedName is how current_setting spells READ COMMITTED.
const readCommittedName = "read committed"

// isolationError is the error for a fenced statement in a transaction at
// isolation level iso.
func isolationError(iso string) error {
	return fmt.Errorf("%w: the transaction is %s", ErrIsolation, iso)
}

// checkTable returns what is wrong with the lease table: missing or
// mistyped columns, and missing unique indexes.
func checkTable(ctx context.Context, q querier, table string, want []column) ([]problem, error) {
	rows, err := q.Query(ctx, columnsSQL, table)
	if err != nil {
		return nil, err
	}
	type col struct {
		typ     string
		notNull bool
	}
	have := map[string]col{}
	var name string
	var c col
	_, err = pgx.ForEachRow(rows, []any{&name, &c.typ, &c.notNull}, func() error {
		have[name] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(have) == 0 {
		return []problem{{msg: "table " + table + " does not exist (run Migrate)"}}, nil
	}
	var problems []problem
	bad := func(format string, args ...any) {
		problems = append(problems, problem{msg: fmt.Sprintf(format, args...)})
	}
	for _, w := range want {
		h, ok := have[w.name]
		switch {
		case !ok && table+"."+w.name == addedParts[0]:
			problems = append(problems, problem{msg: fmt.Sprintf("%s has no column %s (run Migrate)", table, w.name), added: addedParts[0]})
		case !ok:
			bad("%s has no column %s", table, w.name)
		case h.typ != w.typ:
			bad("%s.%s is %s, want %s", table, w.name, h.typ, w.typ)
		case !h.notNull:
			bad("%s.%s is nullable, want NOT NULL", table, w.name)
		}
	}

	rows, err = q.Query(ctx, uniqueKeysSQL, table)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err != nil {
		return nil, err
	}
	exactly := func(cols ...string) bool {
		for _, k := range keys {
			if strings.Join(k, ",") == strings.Join(cols, ",") {
				return true
			}
		}
		return false
	}
	covers := func(col string) bool {
		for _, k := range keys {
			for _, c := range k {
				if c == col {
					return true
				}
			}
		}
		return false
	}
	if !exactly("name") {
		bad("%s has no unique index on (name) alone: acquisition relies on it", table)
	}
	if !covers("epoch") {
		bad("%s has no unique index covering epoch (valid, not partial, not on expressions), "+
			"so an epoch change does not conflict with a fenced write's FOR KEY SHARE: add UNIQUE (name, epoch)", table)
	}
	return problems, nil
}

// leaseTableExists says whether worker_leases resolves on the search path.
func leaseTableExists(ctx context.Context, q querier) (bool, error) {
	rows, err := q.Query(ctx, `SELECT to_regclass('worker_leases') IS NOT NULL`)
	if err != nil {
		return false, err
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowTo[bool])
}
