package sqlcall

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"
)

// src declares types of an application's own, named like drivers' types
// or wrapping them.
const src = `package app

import (
	"context"
	"database/sql"
	"time"
)

// Tx is named like a transaction but only executes SQL.
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Txn commits and rolls back.
type Txn interface {
	Tx
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Wrapped wraps *sql.Tx.
type Wrapped struct{ *sql.Tx }

// Batch is a batch of the application's that sends nothing itself.
type Batch struct{ n int }

// Half commits but does not roll back.
type Half struct{}

func (Half) Commit() error { return nil }

// Journal commits something other than a transaction.
type Journal struct{}

func (Journal) Commit(entry string) int { return 0 }

// Count wraps a count.
type Count struct{}

func (Count) RowsAffected() (int64, error) { return 0, nil }

// Label is no count.
type Label struct{}

func (Label) RowsAffected() string { return "" }

type AliasTx = sql.Tx

// Ext is sqlx's ExtContext: Get and Select scan into dest.
type Ext interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// KV is a key-value store: its key is no SQL text.
type KV interface {
	GetContext(ctx context.Context, key string, opts ...any) ([]byte, error)
	Get(dest any, query string, args ...any) error
}

// Clock reads the time.
type Clock interface{ Now() time.Time }

// Store is a repository that embeds a clock.
type Store interface {
	Clock
	Name() string
	Touch(name string) error
	Ping(ctx context.Context)
	Lease(name string) *sql.Row
	Get(name string) time.Time
}
`

func check(t *testing.T) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "app.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("app", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func lookup(t *testing.T, pkg *types.Package, name string) types.Type {
	t.Helper()
	if name[0] == '*' {
		return types.NewPointer(lookup(t, pkg, name[1:]))
	}
	for _, p := range append([]*types.Package{pkg}, pkg.Imports()...) {
		if obj := p.Scope().Lookup(name); obj != nil {
			return obj.Type()
		}
		if prefix := p.Name() + "."; len(name) > len(prefix) && name[:len(prefix)] == prefix {
			if obj := p.Scope().Lookup(name[len(prefix):]); obj != nil {
				return obj.Type()
			}
		}
	}
	t.Fatalf("no type %s", name)
	return nil
}

func method(t *testing.T, pkg *types.Package, typ, name string) *types.Func {
	t.Helper()
	obj, _, _ := types.LookupFieldOrMethod(lookup(t, pkg, typ), true, nil, name)
	fn, ok := obj.(*types.Func)
	if !ok {
		t.Fatalf("no method %s.%s", typ, name)
	}
	return fn
}

func TestTransaction(t *testing.T) {
	pkg := check(t)
	for typ, want := range map[string]bool{
		"*sql.Tx":   true,
		"*sql.DB":   false,
		"*sql.Conn": false,
		"Tx":        false, // a pool satisfies it as well
		"Txn":       true,
		"Wrapped":   true,
		"*Wrapped":  true,
		"Batch":     false,
		"Half":      false,
		"AliasTx":   true,
	} {
		if got := Transaction(lookup(t, pkg, typ)); got != want {
			t.Errorf("Transaction(%s) = %v, want %v", typ, got, want)
		}
	}
}

func TestCommit(t *testing.T) {
	pkg := check(t)
	for _, tc := range []struct {
		typ  string
		want bool
	}{
		{"*sql.Tx", true},
		{"Txn", true},
		{"Wrapped", true},
		{"Half", true},
		{"Journal", false},
	} {
		if got := Commit(method(t, pkg, tc.typ, "Commit")); got != tc.want {
			t.Errorf("Commit(%s.Commit) = %v, want %v", tc.typ, got, tc.want)
		}
	}
	if Commit(method(t, pkg, "*sql.Tx", "Rollback")) {
		t.Error("Commit(sql.Tx.Rollback) = true")
	}
}

func TestRowsAffected(t *testing.T) {
	pkg := check(t)
	for _, tc := range []struct {
		typ  string
		want bool
	}{
		{"sql.Result", true},
		{"Count", true},
		{"Label", false},
	} {
		if got := RowsAffected(method(t, pkg, tc.typ, "RowsAffected")); got != tc.want {
			t.Errorf("RowsAffected(%s.RowsAffected) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

func TestMethod(t *testing.T) {
	pkg := check(t)
	for _, tc := range []struct {
		typ, name string
		want      bool
	}{
		{"*sql.DB", "ExecContext", true},
		{"*sql.Tx", "QueryRowContext", true},
		{"*sql.Conn", "Exec", false}, // no such method: sql.Conn takes a context
		{"*sql.Tx", "Commit", false},
		{"Tx", "ExecContext", true},      // an interface of the SQL shape
		{"Wrapped", "ExecContext", true}, // promoted from *sql.Tx
		{"Ext", "GetContext", true},      // sqlx's shape: the text after dest
		{"Ext", "SelectContext", true},
		{"KV", "GetContext", false}, // a key, not a destination, before what follows
		{"KV", "Get", false},        // too common a name to take by its shape
	} {
		obj, _, _ := types.LookupFieldOrMethod(lookup(t, pkg, tc.typ), true, nil, tc.name)
		fn, _ := obj.(*types.Func)
		if got := fn != nil && Method(fn); got != tc.want {
			t.Errorf("Method(%s.%s) = %v, want %v", tc.typ, tc.name, got, tc.want)
		}
	}
}

func TestSends(t *testing.T) {
	pkg := check(t)
	for _, tc := range []struct {
		typ, name string
		want      bool
	}{
		{"Tx", "ExecContext", true},
		{"Store", "Touch", true}, // may fail
		{"Store", "Ping", true},  // takes a context
		{"Store", "Lease", true}, // returns a database's row
		{"Store", "Now", false},  // a clock's read, promoted from Clock
		{"Store", "Name", false}, // no context, no error, no answer
		{"Store", "Get", false},  // the same, whatever its name
		{"Txn", "Commit", true},  // sends COMMIT
	} {
		if got := Sends(method(t, pkg, tc.typ, tc.name)); got != tc.want {
			t.Errorf("Sends(%s.%s) = %v, want %v", tc.typ, tc.name, got, tc.want)
		}
	}
}
