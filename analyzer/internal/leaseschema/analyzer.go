package leaseschema

import (
	"go/token"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/internal/lazyssa"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqlcall"
	"github.com/leaseguard/leaseguard/analyzer/internal/sqltext"
)

// Package is a package's lease schema, inferred on demand.
type Package struct {
	get func() *Schema
}

// Get returns the schema that the package's SQL shows, inferring it on
// the first call; the rules of one package share it. It reads every
// statement that the package's production code sends (test files are not
// the lease path), the files it embeds, and its string constants that
// create tables or indexes.
func (p *Package) Get() *Schema { return p.get() }

// Analyzer returns a *Package. The rules ask for the schema only in lease
// packages: nothing is computed elsewhere.
var Analyzer = &analysis.Analyzer{
	Name: "leaseschema",
	Doc: `infer a lease package's lease schema from its SQL

The result infers, on demand and once per package, which tables hold
leases and which columns are their holder, epoch and expiry.`,
	URL:        "https://github.com/leaseguard/leaseguard/blob/main/docs/rules/fence.md#the-lease-table",
	Requires:   []*analysis.Analyzer{lazyssa.Analyzer},
	ResultType: reflect.TypeFor[*Package](),
	Run: func(pass *analysis.Pass) (any, error) {
		build := pass.ResultOf[lazyssa.Analyzer].(*lazyssa.SSA)
		return &Package{get: sync.OnceValue(func() *Schema {
			info := build.Production()
			funcs := lazyssa.Funcs(info)
			texts := sqltext.New(info.Pkg, pass.Files, funcs, pass.Fset, pass.TypesInfo)
			parses := make(pgsql.Cache)
			var stmts []Stmt
			add := func(sql string, pos token.Pos, consts map[int]string) {
				if p := parses.Parse(sql); p.Err == nil {
					for _, raw := range p.Stmts {
						stmts = append(stmts, Stmt{Raw: raw, Pos: pos, Consts: consts})
					}
				}
			}
			for _, fn := range funcs {
				for _, b := range fn.Blocks {
					for _, instr := range b.Instrs {
						call, ok := instr.(ssa.CallInstruction)
						if !ok {
							continue
						}
						if m, ts, ok := texts.Sent(call.Common()); ok {
							var consts map[int]string
							if sqlcall.Executes(call.Common()) != nil {
								consts = sqltext.ConstArgs(call.Common(), m)
							}
							for _, t := range ts {
								pos := call.Pos()
								if t.At != nil {
									pos = t.At.Pos()
								}
								add(t.SQL, pos, consts)
							}
						}
					}
				}
			}
			for _, sql := range texts.Embeds() {
				add(sql, token.NoPos, nil)
			}
			for _, sql := range texts.Consts() {
				if strings.Contains(strings.ToLower(sql), "create") {
					add(sql, token.NoPos, nil)
				}
			}
			return Infer(stmts)
		})}, nil
	},
}
