package fence

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// placeholder stands in, in a recovered SQL text, for a part that is not
// constant. It is an identifier, so that a table name built in parses; a
// statement in which it lands anywhere else does not parse, and is then not
// checked at all.
const placeholder = "leaseguard_unknown"

// maxTexts bounds the texts that one value may hold (a Phi of Phis of
// constants multiplies): past it the value counts as not recoverable.
const maxTexts = 16

// A text is one SQL text that a call may send.
type text struct {
	sql   string
	exact bool     // every part was recovered: no placeholder in sql
	at    ast.Expr // the SQL argument to report at, in this package's outermost call that passes the text; nil: the call's own
}

// texts recovers the SQL texts that SSA values can hold: constants and
// their concatenations, fmt.Sprintf with a constant format, unexported
// fields and package variables that are assigned only such values, files
// embedded with //go:embed, and parameters of functions whose every caller
// is in this package. Anything else is not guessed at.
type texts struct {
	pkg    *ssa.Package
	calls  map[token.Pos]*ast.CallExpr // by Lparen, for arguments' positions
	embeds map[*types.Var]string       // //go:embed'd strings and their contents

	stores  map[any][]ssa.Value // field (*types.Var) or *ssa.Global: the values stored to it
	escaped map[any]bool        // fields, globals and functions written or called where this cannot see

	callers map[*ssa.Function][]*ssa.CallCommon

	memo  map[ssa.Value][]text
	known map[ssa.Value]bool // memo holds the value; false with memo nil: not recoverable
	busy  map[ssa.Value]bool // on the stack: a cycle is not recoverable
}

func newTexts(pkg *ssa.Package, files []*ast.File, funcs []*ssa.Function, fset *token.FileSet, info *types.Info) *texts {
	t := &texts{
		pkg:     pkg,
		calls:   make(map[token.Pos]*ast.CallExpr),
		embeds:  embeds(fset, files, info),
		stores:  make(map[any][]ssa.Value),
		escaped: make(map[any]bool),
		callers: make(map[*ssa.Function][]*ssa.CallCommon),
		memo:    make(map[ssa.Value][]text),
		known:   make(map[ssa.Value]bool),
		busy:    make(map[ssa.Value]bool),
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				t.calls[call.Lparen] = call
			}
			return true
		})
	}
	invoked := make(map[string]bool) // method names called through an interface
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				t.index(instr, invoked)
			}
		}
	}
	for fn := range t.callers {
		if fn.Signature.Recv() != nil && invoked[fn.Name()] {
			t.escaped[fn] = true
		}
	}
	return t
}

// index records what instr stores to fields and globals, which functions
// it calls, and which of them escape its sight.
func (t *texts) index(instr ssa.Instruction, invoked map[string]bool) {
	switch in := instr.(type) {
	case *ssa.FieldAddr:
		t.indexAddr(in, fieldOf(in))
	case ssa.CallInstruction:
		call := in.Common()
		if call.IsInvoke() {
			invoked[call.Method.Name()] = true
		} else if fn := call.StaticCallee(); fn != nil && fn.Pkg == t.pkg {
			t.callers[fn] = append(t.callers[fn], call)
		}
	}
	// A global's address, or a function used as a value rather than
	// called, goes where this cannot follow it.
	var ops [8]*ssa.Value
	for i, op := range instr.Operands(ops[:0]) {
		switch v := (*op).(type) {
		case *ssa.Global:
			if store, ok := instr.(*ssa.Store); ok && i == 0 {
				t.stores[v] = append(t.stores[v], store.Val)
			} else if load, ok := instr.(*ssa.UnOp); !ok || load.Op != token.MUL {
				t.escaped[v] = true
			}
		case *ssa.Function:
			if call, ok := instr.(ssa.CallInstruction); !ok || call.Common().Value != v || i != 0 {
				t.escaped[v] = true
			}
		}
	}
}

// indexAddr records the stores through addr, the address of key, and
// marks key escaped when the address is used for anything but loads and
// stores.
func (t *texts) indexAddr(addr ssa.Value, key any) {
	for _, r := range *addr.Referrers() {
		switch r := r.(type) {
		case *ssa.Store:
			if r.Addr == addr {
				t.stores[key] = append(t.stores[key], r.Val)
				continue
			}
		case *ssa.UnOp:
			if r.Op == token.MUL {
				continue
			}
		case *ssa.DebugRef:
			continue
		}
		t.escaped[key] = true
	}
}

func fieldOf(fa *ssa.FieldAddr) *types.Var {
	ptr, ok := fa.X.Type().Underlying().(*types.Pointer)
	if !ok {
		return nil
	}
	st, ok := ptr.Elem().Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	return st.Field(fa.Field)
}

// of returns the texts v may hold, or false when v is not recoverable.
func (t *texts) of(v ssa.Value) ([]text, bool) {
	if ok, done := t.known[v]; done {
		return t.memo[v], ok
	}
	if t.busy[v] {
		return nil, false
	}
	t.busy[v] = true
	ts, ok := t.recover(v)
	delete(t.busy, v)
	if len(ts) > maxTexts {
		ts, ok = nil, false
	}
	t.memo[v], t.known[v] = ts, ok
	return ts, ok
}

// part returns the texts of v as a part of a larger text: a placeholder
// stands in when v is not recoverable.
func (t *texts) part(v ssa.Value) []text {
	if ts, ok := t.of(v); ok {
		return ts
	}
	return []text{{sql: placeholder}}
}

func (t *texts) recover(v ssa.Value) ([]text, bool) {
	switch v := v.(type) {
	case *ssa.Const:
		if v.Value == nil || v.Value.Kind() != constant.String {
			return nil, false
		}
		return []text{{sql: constant.StringVal(v.Value), exact: true}}, true
	case *ssa.BinOp:
		if v.Op != token.ADD {
			return nil, false
		}
		return join(t.part(v.X), t.part(v.Y)), true
	case *ssa.Phi:
		var all []text
		for _, e := range v.Edges {
			ts, ok := t.of(e)
			if !ok {
				return nil, false
			}
			all = append(all, ts...)
		}
		return dedupe(all), true
	case *ssa.ChangeType:
		return t.of(v.X)
	case *ssa.Convert:
		if isString(v.X.Type()) {
			return t.of(v.X)
		}
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return t.load(v.X)
		}
	case *ssa.Call:
		return t.sprintf(&v.Call)
	case *ssa.Parameter:
		return t.param(v)
	}
	return nil, false
}

// load recovers what a load from addr may read: a field or a package
// variable that this package alone assigns, only recoverable values.
func (t *texts) load(addr ssa.Value) ([]text, bool) {
	var key any
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		f := fieldOf(a)
		if f == nil || f.Exported() {
			return nil, false // other packages may assign it
		}
		key = f
	case *ssa.Global:
		obj, _ := a.Object().(*types.Var)
		if obj == nil {
			return nil, false
		}
		if s, ok := t.embeds[obj]; ok {
			return []text{{sql: s, exact: true}}, true
		}
		if obj.Exported() {
			return nil, false
		}
		key = a
	default:
		return nil, false
	}
	if t.escaped[key] || len(t.stores[key]) == 0 {
		return nil, false
	}
	var all []text
	for _, v := range t.stores[key] {
		ts, ok := t.of(v)
		if !ok {
			return nil, false
		}
		all = append(all, ts...)
	}
	return dedupe(all), true
}

// param recovers a parameter of a function that only this package calls,
// from the arguments of its calls. The texts then report at those calls'
// arguments, where the statement is chosen.
func (t *texts) param(p *ssa.Parameter) ([]text, bool) {
	fn := p.Parent()
	if fn.Object() == nil || fn.Object().Exported() || t.escaped[fn] || len(t.callers[fn]) == 0 {
		return nil, false
	}
	i := slices.Index(fn.Params, p) // Params and Args both count a receiver first
	var all []text
	for _, call := range t.callers[fn] {
		ts, ok := t.of(call.Args[i])
		if !ok {
			return nil, false
		}
		at := t.arg(call, i)
		for _, tx := range ts {
			if tx.at == nil {
				tx.at = at
			}
			all = append(all, tx)
		}
	}
	return all, true
}

// arg returns the syntax of call's argument i, counting a receiver first
// as SSA does, or nil.
func (t *texts) arg(call *ssa.CallCommon, i int) ast.Expr {
	ce := t.calls[call.Pos()]
	if ce == nil {
		return nil
	}
	if call.Signature().Recv() != nil {
		if i == 0 {
			return nil
		}
		i--
	}
	if i >= len(ce.Args) {
		return nil
	}
	return ce.Args[i]
}

// sprintf recovers fmt.Sprintf with a constant format. Arguments that are
// not recoverable print as the placeholder, whatever their verb.
func (t *texts) sprintf(call *ssa.CallCommon) ([]text, bool) {
	fn := call.StaticCallee()
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() != "fmt" || fn.Name() != "Sprintf" {
		return nil, false
	}
	format, ok := t.of(call.Args[0])
	if !ok {
		return nil, false
	}
	args, ok := varargs(call.Args[1])
	if !ok {
		return nil, false
	}
	// Each argument is a set of alternatives; the texts are every choice.
	var vals [][]any
	for _, a := range args {
		if mi, ok := a.(*ssa.MakeInterface); ok {
			a = mi.X
		}
		var alts []any
		if c, ok := a.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() != constant.String {
			alts = []any{constant.Val(c.Value)}
		} else if isString(a.Type()) {
			for _, tx := range t.part(a) {
				alts = append(alts, tx)
			}
		} else {
			alts = []any{text{sql: placeholder}}
		}
		vals = append(vals, alts)
	}
	var out []text
	for _, f := range format {
		for _, picked := range product(vals) {
			exact := f.exact
			printed := make([]any, len(picked))
			for i, p := range picked {
				if tx, ok := p.(text); ok {
					exact = exact && tx.exact
					printed[i] = tx.sql
				} else {
					printed[i] = p
				}
			}
			out = append(out, text{sql: fmt.Sprintf(f.sql, printed...), exact: exact})
			if len(out) > maxTexts {
				return nil, false
			}
		}
	}
	return out, true
}

// varargs returns the elements of a variadic argument slice that SSA
// built in place, or false.
func varargs(v ssa.Value) ([]ssa.Value, bool) {
	if c, ok := v.(*ssa.Const); ok && c.IsNil() {
		return nil, true
	}
	s, ok := v.(*ssa.Slice)
	if !ok {
		return nil, false
	}
	alloc, ok := s.X.(*ssa.Alloc)
	if !ok {
		return nil, false
	}
	n := alloc.Type().(*types.Pointer).Elem().(*types.Array).Len()
	elems := make([]ssa.Value, n)
	for _, r := range *alloc.Referrers() {
		ia, ok := r.(*ssa.IndexAddr)
		if !ok {
			continue
		}
		idx, ok := ia.Index.(*ssa.Const)
		if !ok {
			return nil, false
		}
		i, _ := constant.Int64Val(idx.Value)
		for _, rr := range *ia.Referrers() {
			if st, ok := rr.(*ssa.Store); ok && st.Addr == ia {
				elems[i] = st.Val
			}
		}
	}
	for _, e := range elems {
		if e == nil {
			return nil, false
		}
	}
	return elems, true
}

// product returns every choice of one alternative per position.
func product(alts [][]any) [][]any {
	out := [][]any{nil}
	for _, as := range alts {
		var next [][]any
		for _, prefix := range out {
			for _, a := range as {
				next = append(next, append(prefix[:len(prefix):len(prefix)], a))
			}
		}
		out = next
		if len(out) > maxTexts {
			return out[:maxTexts+1]
		}
	}
	return out
}

// join concatenates every text of xs with every text of ys.
func join(xs, ys []text) []text {
	var out []text
	for _, x := range xs {
		for _, y := range ys {
			at := x.at
			if at == nil {
				at = y.at
			}
			out = append(out, text{sql: x.sql + y.sql, exact: x.exact && y.exact, at: at})
		}
	}
	return out
}

func dedupe(ts []text) []text {
	seen := make(map[text]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// embeds reads the files that //go:embed puts into string variables of
// the package. Reading them here is safe for go vet's cache:
// vet keys a package's result on its compile action, whose key covers the
// embedded files' contents.
func embeds(fset *token.FileSet, files []*ast.File, info *types.Info) map[*types.Var]string {
	m := make(map[*types.Var]string)
	for _, f := range files {
		dir := filepath.Dir(fset.File(f.FileStart).Name())
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				patterns := embedPatterns(doc)
				if len(patterns) != 1 || len(vs.Names) != 1 {
					continue // a string takes exactly one file
				}
				obj, _ := info.Defs[vs.Names[0]].(*types.Var)
				if obj == nil || !isString(obj.Type()) {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(patterns[0]))); err == nil {
					m[obj] = string(b)
				}
			}
		}
	}
	return m
}

// embedPatterns returns the patterns of the //go:embed lines in doc.
func embedPatterns(doc *ast.CommentGroup) []string {
	if doc == nil {
		return nil
	}
	var out []string
	for _, c := range doc.List {
		rest, ok := strings.CutPrefix(c.Text, "//go:embed ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if uq, err := strconv.Unquote(f); err == nil {
				f = uq
			}
			out = append(out, f)
		}
	}
	return out
}
