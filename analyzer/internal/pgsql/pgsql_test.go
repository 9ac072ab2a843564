package pgsql

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestNamedArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"one per name, in order", `SELECT @b, @a, @b`, `SELECT $1, $2, $1`},
		{"after an operator", `WHERE holder=@holder AND epoch>=@epoch`, `WHERE holder=$1 AND epoch>=$2`},
		{"a keyword as the name", `WHERE name = @name`, `WHERE name = $1`},
		{"case folds as pgx does", `SELECT @Name, @name`, `SELECT $1, $1`},
		{"not in a string", `SELECT 'a@b', @c`, `SELECT 'a@b', $1`},
		{"not in a quoted identifier", `SELECT "x@y" FROM t WHERE v = @v`, `SELECT "x@y" FROM t WHERE v = $1`},
		{"not in a comment", `SELECT 1 -- @nobody`, `SELECT 1 -- @nobody`},
		{"absolute value with a space", `SELECT @ x`, `SELECT @ x`},
		{"no @ at all", `SELECT $1`, `SELECT $1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NamedArgs(tc.in); got != tc.want {
				t.Errorf("NamedArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := Parse(tc.in).Src; got != tc.want && !strings.HasPrefix(tc.in, "WHERE") {
				t.Errorf("Parse(%q).Src = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestOffsets checks that positions in the rewritten text map back to the
// text as written, so that reports and fixes land where the user wrote.
func TestOffsets(t *testing.T) {
	t.Parallel()
	sql := `SELECT @holder, @epoch FROM worker_leases`
	p := Parse(sql)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	rv := p.Stmts[0].Stmt.GetSelectStmt().FromClause[0].GetRangeVar()
	if got := sql[p.Orig(int(rv.Location)):]; got != "worker_leases" {
		t.Errorf("relation at %q, want worker_leases", got)
	}
	params := p.Stmts[0].Stmt.GetSelectStmt().TargetList
	loc := int(params[1].GetResTarget().Val.GetParamRef().Location)
	if got := p.Spell(loc, "?"); got != "@epoch" {
		t.Errorf("second parameter spelled %q, want @epoch", got)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sql, want string }{
		{"named arguments before the error", "SELECT @a,\n  FROM t", `syntax error at or near "FROM" (line 2, column 3 of the statement)`},
		// PostgreSQL counts characters; the column must not count the
		// extra bytes of é and ü.
		{"non-ASCII text before the error", "SELECT 'café', 'über' FROM FROM", `syntax error at or near "FROM" (line 1, column 28 of the statement)`},
		{"a long token is cut", "SELECT 1 " + strings.Repeat("x", 500) + " " + strings.Repeat("y", 500),
			`syntax error at or near "` + strings.Repeat("y", maxQuoted) + `…" (line 1, column 511 of the statement)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Parse(tc.sql)
			if p.Err == nil {
				t.Fatal("parsed")
			}
			if got := p.Describe(); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
			line, col := Position(tc.sql, p.ErrorOffset())
			if got, want := fmt.Sprintf("(line %d, column %d", line, col), tc.want[strings.LastIndex(tc.want, "(line"):]; !strings.HasPrefix(want, got) {
				t.Errorf("ErrorOffset at %s, want %s", got, want)
			}
		})
	}
}

// TestBudget checks that texts the parser cannot survive are refused
// before it sees them, and that large texts of ordinary shape still parse.
// Without the budget, the first three kill the test binary with SIGSEGV in
// C code, or fail with the protocol buffer decoder's recursion limit.
func TestBudget(t *testing.T) {
	t.Parallel()
	nested := func(n int) string { return strings.Repeat("SELECT (", n) + "1" + strings.Repeat(")", n) }
	for _, tc := range []struct {
		name    string
		sql     string
		refused bool
	}{
		{"30,000 chained +", "SELECT 1" + strings.Repeat(" + 1", 30000), true},
		{"50,000 UNION ALL arms", "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 50000), true},
		{"3,000 nested subqueries", nested(3000), true},
		{"5,000 chained + in a statement after a short one", "SELECT 1; SELECT 1" + strings.Repeat(" + 1", 5000), true},
		{"a text over the size limit", "SELECT '" + strings.Repeat("x", MaxLen) + "'", true},
		{"500 chained +", "SELECT 1" + strings.Repeat(" + 1", 500), false},
		{"300 nested subqueries", nested(300), false},
		{"20,000 rows of negative numbers", "INSERT INTO t VALUES (-1, -2)" + strings.Repeat(", (-1, 2 - 3)", 20000), false},
		{"50,000 ANDs, a flat list in the tree", "SELECT 1 WHERE true" + strings.Repeat(" AND x = 1", 50000), false},
		{"10,000 parentheses around one value", "SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000), true},
		{"2,000 short statements", strings.Repeat("SELECT 1 + 1 + 1;\n", 2000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Parse(tc.sql)
			var tce *TooComplexError
			refused := errors.As(p.Err, &tce)
			if refused != tc.refused {
				t.Fatalf("refused = %v (err %v), want %v", refused, p.Err, tc.refused)
			}
			if !refused && p.Err != nil {
				t.Fatalf("err = %v", p.Err)
			}
			if refused && !strings.Contains(p.Describe(), "to check") {
				t.Errorf("Describe = %q, want it to say the text is too large or deep to check", p.Describe())
			}
		})
	}
}

func TestDialect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ sql, want string }{
		{"UPDATE leases SET owner = ? WHERE name = ?", "? placeholders"},
		{"SELECT `name` FROM `leases`", "backquoted names"},
		{"SELECT * FROM leases WHERE", ""},
		{"SELECT * FROM leases WHERE name = $1", ""},
	} {
		if got := Parse(tc.sql).Dialect(); got != tc.want {
			t.Errorf("Dialect(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// FuzzParse checks that no text crashes the parse wrapper, and that every
// offset it gives lies within the text as written.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT @a, @b FROM t WHERE x = @a",
		"UPDATE worker_leases SET expires_at = clock_timestamp() + $1 WHERE name = @name AND holder=@holder",
		"SELECT 'café' FROM FROM",
		"SELECT 1" + strings.Repeat(" + 1", 3000),
		"SELECT ((((1",
		"SELECT $1::int::text::int",
		"WITH d AS (DELETE FROM lease WHERE name = $1 RETURNING *) SELECT pg_notify('x', name) FROM d",
		"SELECT ? FROM `t`",
		"SELECT '@x', \"@y\", @z -- @w",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		p := Parse(sql)
		if off := p.ErrorOffset(); off > len(sql) {
			t.Fatalf("ErrorOffset %d past the text's %d bytes", off, len(sql))
		}
		if p.Err != nil {
			_ = p.Describe()
			_ = p.Dialect()
			return
		}
		for _, raw := range p.Stmts {
			if o := p.Orig(int(raw.StmtLocation)); o < 0 || o > len(sql) {
				t.Fatalf("statement at %d, outside the text's %d bytes", o, len(sql))
			}
		}
	})
}

// FuzzNamedArgs checks that rewriting named arguments maps every offset of
// the rewritten text back into the original, keeps the text around the
// arguments as it was, and leaves texts without @ alone.
func FuzzNamedArgs(f *testing.F) {
	for _, s := range []string{"SELECT @a, @b, @a", "SELECT 'a@b', @c", "SELECT @ x", "x=@y", "SELECT 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		p := Parse(sql)
		if !strings.Contains(sql, "@") && p.Src != sql {
			t.Fatalf("text without @ rewritten to %q", p.Src)
		}
		for off := 0; off <= len(p.Src); off++ {
			o := p.Orig(off)
			if o < 0 || o > len(sql) {
				t.Fatalf("offset %d of %q maps to %d, outside %q", off, p.Src, o, sql)
			}
		}
		// A parameter name is an identifier: a text that ends in anything
		// else keeps its end.
		if n := len(sql); n > 0 && !identByte(sql[n-1]) && !strings.HasSuffix(p.Src, sql[n-1:]) {
			t.Fatalf("rewriting changed the text's end: %q -> %q", sql, p.Src)
		}
	})
}

func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= 0x80 || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
}

func TestSessionOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{`SET statement_timeout = 0`, true},
		{`RESET ALL`, true},
		{`DISCARD ALL`, true},
		{`CREATE TEMP TABLE seen (id bigint)`, true},
		{`CREATE TABLE pg_temp.seen (id bigint)`, true},
		{`CREATE TYPE pg_temp.r AS (locked boolean, remaining integer)`, true},
		{`CREATE OR REPLACE FUNCTION pg_temp.f(n integer) RETURNS integer AS $$ UPDATE jobs SET n = n - 1 RETURNING n $$ LANGUAGE sql`, true},
		{`DROP FUNCTION pg_temp.f(integer, jobs); DROP TYPE pg_temp.r`, true},
		{`DROP TABLE pg_temp.seen`, true},
		// Shared objects and rows.
		{`CREATE TABLE seen (id bigint)`, false},
		{`CREATE FUNCTION f() RETURNS int AS 'SELECT 1' LANGUAGE sql`, false},
		{`DROP TABLE seen`, false},
		{`DROP TABLE pg_temp.seen, jobs`, false},
		{`DROP FUNCTION public.f(integer)`, false},
		{`UPDATE jobs SET done = true`, false},
		{`SELECT pg_advisory_unlock_all()`, false},
	} {
		p := Parse(tc.sql)
		if p.Err != nil {
			t.Fatalf("%s: %v", tc.sql, p.Err)
		}
		got := true
		for _, raw := range p.Stmts {
			got = got && SessionOnly(raw)
		}
		if got != tc.want {
			t.Errorf("SessionOnly(%s) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
