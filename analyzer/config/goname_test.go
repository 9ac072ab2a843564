package config_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

// TestUnresolvedGoNames resolves -fence.table and -fence.tables Go names
// against a lease package and what it imports: a name that the packages
// show not to exist is an error naming the setting, the value and what is
// missing; one they cannot decide (another package's unexported name, a
// package the lease package does not import) is left alone.
func TestUnresolvedGoNames(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs := map[string]*types.Package{}
	check := func(path, src string) {
		f, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{Importer: importerFunc(func(p string) (*types.Package, error) {
			if pkg := pkgs[p]; pkg != nil {
				return pkg, nil
			}
			return importer.Default().Import(p)
		})}
		pkg, err := conf.Check(path, fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[path] = pkg
	}
	check("example.com/deep", `package deep
type Row struct{ Table string }
var Name = "rows"`)
	check("example.com/dep", `package dep
import "example.com/deep"
type Config struct{ Table string; lock string }
type inner struct{ Hidden string }
type Outer struct{ inner }
var Name = "leases"
const Const = "leases"
func Row() deep.Row { return deep.Row{} }`)
	check("example.com/dep.v2", `package dep
var Name = "leases"`)
	check("example.com/lease", `package lease
import (
	"example.com/dep"
	depv2 "example.com/dep.v2"
)
type Store struct{ table string }
var tableName = "leases"
func f() string {
	type local struct{ name string }
	return local{}.name + dep.Name + depv2.Name + dep.Row().Table
}`)
	lease := pkgs["example.com/lease"]
	for _, tc := range []struct {
		name string
		want string // in the error; "" for none
	}{
		{"example.com/lease.Store.table", ""},
		{"example.com/lease.tableName", ""},
		{"example.com/lease.local.name", ""},
		{"example.com/dep.Config.Table", ""},
		{"example.com/dep.Config.lock", ""},
		{"example.com/dep.Name", ""},
		{"example.com/dep.v2.Name", ""},
		{"example.com/deep.Row.Table", ""},
		{"example.com/lease.Store.tabel", "example.com/lease.Store has no field tabel"},
		{"example.com/lease.tablename", "example.com/lease has no package variable tablename"},
		{"example.com/lease.Stor.table", "example.com/lease has no type Stor"},
		{"example.com/lease.Store", "example.com/lease.Store is a type, not a variable"},
		{"example.com/lease.f.name", "example.com/lease.f is a function, not a type"},
		{"example.com/dep.Config.Tabel", "example.com/dep.Config has no field Tabel"},
		{"example.com/dep.Nam", "example.com/dep has no package variable Nam"},
		{"example.com/dep.Const", "example.com/dep.Const is a constant, not a variable"},
		{"example.com/dep.Outer.Hidden", "has no field Hidden of its own (a promoted field is named by the type that declares it)"},
		{"example.com/dep.Confg.Table", "example.com/dep has no type Confg"},
		{"example.com/deep.Row.Tabel", "example.com/deep.Row has no field Tabel"},
		// Not decided from the lease package.
		{"example.com/dep.inner.Hidden", ""},
		{"example.com/dep.lockName", ""},
		{"example.com/deep.Nam", ""},
		{"example.com/deep.Rows.Table", ""},
		{"example.com/other.Config.Table", ""},
	} {
		for _, key := range []string{"table", "tables"} {
			f := config.Fence{}
			if key == "table" {
				f.Table = config.Names{"leases", tc.name}
			} else {
				f.Tables = config.Names{"orders", tc.name}
			}
			errs := f.UnresolvedGoNames(lease)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("-fence.%s=%s: %v, want none", key, tc.name, errs)
			case tc.want != "" && len(errs) != 1:
				t.Errorf("-fence.%s=%s: %v, want one error containing %q", key, tc.name, errs, tc.want)
			case tc.want != "":
				msg := errs[0].Error()
				prefix := `-fence.` + key + ` "` + tc.name + `": `
				if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "want pkg/path.Type.Field or pkg/path.Var") || !config.IsSettingError(msg) {
					t.Errorf("-fence.%s=%s: %q, want %q, then %q and what is expected", key, tc.name, msg, prefix, tc.want)
				}
			}
		}
	}
	if config.IsSettingError(`time.Now flows into an argument of Exec`) {
		t.Error("a rule's finding taken for a setting error")
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
