package fence

import "testing"

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
			if got, _ := namedArgs(tc.in); got != tc.want {
				t.Errorf("namedArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestOffsets checks that positions in the rewritten text map back to the
// text as written, so that reports and fixes land where the user wrote.
func TestOffsets(t *testing.T) {
	t.Parallel()
	sql := `SELECT @holder, @epoch FROM worker_leases`
	p := parse(sql)
	if p.err != nil {
		t.Fatal(p.err)
	}
	rv := p.stmts[0].Stmt.GetSelectStmt().FromClause[0].GetRangeVar()
	if got := sql[p.orig(int(rv.Location)):]; got != "worker_leases" {
		t.Errorf("relation at %q, want worker_leases", got)
	}
	params := p.stmts[0].Stmt.GetSelectStmt().TargetList
	loc := int(params[1].GetResTarget().Val.GetParamRef().Location)
	if got := p.spell(loc, "?"); got != "@epoch" {
		t.Errorf("second parameter spelled %q, want @epoch", got)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	sql := "SELECT @a,\n  FROM t"
	p := parse(sql)
	if p.err == nil {
		t.Fatal("parsed")
	}
	if got, want := p.describe(sql), `syntax error at or near "FROM" (line 2, column 3 of the statement)`; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
}
