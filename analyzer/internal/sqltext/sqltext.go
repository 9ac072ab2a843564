// Package sqltext recovers, from a package's SSA form, the SQL texts that
// its calls may send: constants and their concatenations, fmt.Sprintf with
// a constant format, unexported fields and package variables assigned only
// such values, files embedded with //go:embed, and parameters of functions
// that only the package calls. A part that is not constant (a table name
// chosen at run time) stands in as an identifier that names the Go
// expression it came from, so that the text still parses and a message can
// say "the table named by c.tableName". Anything else is not guessed at.
//
// It also maps offsets in a recovered text back to the string literals
// that spell it, so that findings land where the user wrote the SQL.
package sqltext

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

// placeholder starts the identifier that stands in, in a recovered SQL
// text, for a part that is not constant: placeholder alone when nothing is
// known of the part, placeholder_N for the Nth Go expression that
// [Texts.Expr] names. It is an identifier, so that a table name built in
// parses; a statement in which it lands anywhere else does not parse.
const placeholder = "leaseguard_unknown"

// maxTexts bounds the texts that one value may hold at one place (a Phi of
// Phis of constants multiplies): past it the value counts as not
// recoverable. A function's parameter holds the texts of all its callers,
// maxTexts for each.
const maxTexts = 16

// maxAll bounds the texts that one value may hold in all, whatever their
// places.
const maxAll = 1024

// A Text is one SQL text that a call may send.
type Text struct {
	SQL   string
	Exact bool     // every part was recovered: no placeholder in SQL
	At    ast.Expr // the SQL argument to report at, in this package's outermost call that passes the text; nil: the call's own
}

// Texts recovers the SQL texts that SSA values can hold.
type Texts struct {
	pkg    *ssa.Package
	fset   *token.FileSet
	info   *types.Info
	calls  map[token.Pos]*ast.CallExpr   // by Lparen, for arguments' positions
	binops map[token.Pos]*ast.BinaryExpr // by OpPos, for the syntax of a concatenation's parts
	embeds map[*types.Var]string         // //go:embed'd strings and their contents

	consts     map[string][]ast.Expr // string constants' declarations by value
	constExprs map[*types.Const]ast.Expr

	exprs   []string    // the Go expressions that placeholders name, placeholder_N at N-1
	goNames []string    // where each placeholder's value is held (pkg/path.Type.Field, pkg/path.Var), or ""
	exprNum map[any]int // their numbers, by where the value comes from (see origin)

	stores  map[any][]ssa.Value // field (*types.Var) or *ssa.Global: the values stored to it
	escaped map[any]bool        // fields, globals and functions written or called where this cannot see

	callers map[*ssa.Function][]*ssa.CallCommon

	memo  map[ssa.Value][]Text
	known map[ssa.Value]bool // memo holds the value; false with memo nil: not recoverable
	busy  map[ssa.Value]bool // on the stack: a cycle is not recoverable
}

// New indexes a package for recovery: files and funcs are the package's
// syntax and the SSA functions to read stores and calls from.
func New(pkg *ssa.Package, files []*ast.File, funcs []*ssa.Function, fset *token.FileSet, info *types.Info) *Texts {
	t := &Texts{
		pkg:     pkg,
		fset:    fset,
		info:    info,
		calls:   make(map[token.Pos]*ast.CallExpr),
		binops:  make(map[token.Pos]*ast.BinaryExpr),
		embeds:  embeds(fset, files, info),
		exprNum: make(map[any]int),
		stores:  make(map[any][]ssa.Value),
		escaped: make(map[any]bool),
		callers: make(map[*ssa.Function][]*ssa.CallCommon),
		memo:    make(map[ssa.Value][]Text),
		known:   make(map[ssa.Value]bool),
		busy:    make(map[ssa.Value]bool),
	}
	t.constExprs, t.consts = constDecls(files, info)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				t.calls[n.Lparen] = n
			case *ast.BinaryExpr:
				t.binops[n.OpPos] = n
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
func (t *Texts) index(instr ssa.Instruction, invoked map[string]bool) {
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
func (t *Texts) indexAddr(addr ssa.Value, key any) {
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

// Of returns the texts that v, an SSA value of the package, may hold, or
// false when v is not recoverable.
func (t *Texts) Of(v ssa.Value) ([]Text, bool) { return t.of(v) }

func (t *Texts) of(v ssa.Value) ([]Text, bool) {
	if ok, done := t.known[v]; done {
		return t.memo[v], ok
	}
	if t.busy[v] {
		return nil, false
	}
	t.busy[v] = true
	ts, ok := t.recover(v)
	delete(t.busy, v)
	if tooMany(ts) {
		ts, ok = nil, false
	}
	t.memo[v], t.known[v] = ts, ok
	return ts, ok
}

// tooMany reports whether ts holds more than maxTexts texts for one place,
// or more than maxAll in all.
func tooMany(ts []Text) bool {
	if len(ts) <= maxTexts {
		return false
	}
	if len(ts) > maxAll {
		return true
	}
	per := make(map[ast.Expr]int)
	for _, tx := range ts {
		per[tx.At]++
		if per[tx.At] > maxTexts {
			return true
		}
	}
	return false
}

// part returns the texts of v as a part of a larger text: a placeholder
// naming syntax (the Go expression that v is, or nil) stands in when v is
// not recoverable.
func (t *Texts) part(v ssa.Value, syntax ast.Expr) []Text {
	if ts, ok := t.of(v); ok {
		return ts
	}
	return []Text{{SQL: t.hole(v, syntax)}}
}

// hole returns the placeholder for v, whose syntax is given or found. Two
// values get the same placeholder when they come from the same place: one
// parameter, one field or one package variable, so that a table held in
// c.tableName is one table in every statement that names it.
func (t *Texts) hole(v ssa.Value, syntax ast.Expr) string {
	name := ""
	if syntax != nil {
		name = types.ExprString(syntax)
	} else {
		name = describe(v)
	}
	if name == "" || len(name) > 60 {
		return placeholder
	}
	key := origin(v)
	n, ok := t.exprNum[key]
	if !ok {
		t.exprs = append(t.exprs, name)
		t.goNames = append(t.goNames, goName(v))
		n = len(t.exprs)
		t.exprNum[key] = n
	}
	return placeholder + "_" + strconv.Itoa(n)
}

// origin returns where v comes from: the field or package variable it is
// loaded from, or v itself.
func origin(v ssa.Value) any {
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.MUL {
			switch a := v.X.(type) {
			case *ssa.FieldAddr:
				if f := fieldOf(a); f != nil {
					return f
				}
			case *ssa.Global:
				return a
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			return st.Field(v.Field)
		}
	}
	return v
}

// goName returns where v is loaded from, as a setting names it: a
// field as pkg/path.Type.Field, a package variable as pkg/path.Var; "" for
// anything else.
func goName(v ssa.Value) string {
	field := func(x types.Type, f *types.Var) string {
		if p, ok := x.(*types.Pointer); ok {
			x = p.Elem()
		}
		n, ok := x.(*types.Named)
		if !ok || f == nil || n.Obj().Pkg() == nil {
			return ""
		}
		return n.Obj().Pkg().Path() + "." + n.Obj().Name() + "." + f.Name()
	}
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.MUL {
			switch a := v.X.(type) {
			case *ssa.FieldAddr:
				return field(a.X.Type(), fieldOf(a))
			case *ssa.Global:
				if a.Pkg != nil {
					return a.Pkg.Pkg.Path() + "." + a.Name()
				}
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			return field(v.X.Type(), st.Field(v.Field))
		}
	}
	return ""
}

// Named returns the placeholders that stand for values loaded from the
// field or package variable that name gives (pkg/path.Type.Field,
// pkg/path.Var), among the texts recovered so far.
func (t *Texts) Named(name string) []string {
	var out []string
	for i, g := range t.goNames {
		if g == name {
			out = append(out, placeholder+"_"+strconv.Itoa(i+1))
		}
	}
	return out
}

// Tables returns the relation names that a table setting matches: the
// table's name as name reads it, or, for a setting that names the Go field
// or variable holding a run-time table name (see [config.GoName]), the
// placeholders of the texts recovered so far that stand for it.
func (t *Texts) Tables(setting string, name func(string) string) []string {
	if config.GoName(setting) {
		return t.Named(setting)
	}
	return []string{name(setting)}
}

// Expr returns the Go expression that the placeholder ident stands for, or
// "" when ident is a placeholder with nothing known of it; false when ident
// is no placeholder.
func (t *Texts) Expr(ident string) (string, bool) {
	rest, ok := strings.CutPrefix(ident, placeholder)
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "_"))
	if err != nil || n < 1 || n > len(t.exprs) {
		return "", false
	}
	return t.exprs[n-1], true
}

// IsPlaceholder reports whether an identifier in a recovered text stands
// for a part that is not constant.
func IsPlaceholder(ident string) bool { return strings.HasPrefix(ident, placeholder) }

// describe names v as Go code would, from its SSA form: a parameter, a
// package variable, a field of one, or a method call on one; "" when it
// has no such name.
func describe(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return describe(v.X)
		}
	case *ssa.FieldAddr:
		if f := fieldOf(v); f != nil {
			if x := describe(v.X); x != "" {
				return x + "." + f.Name()
			}
		}
	case *ssa.Field:
		if st, ok := v.X.Type().Underlying().(*types.Struct); ok {
			if x := describe(v.X); x != "" {
				return x + "." + st.Field(v.Field).Name()
			}
		}
	case *ssa.Parameter:
		return v.Name()
	case *ssa.FreeVar:
		return v.Name()
	case *ssa.Global:
		return v.Name()
	case *ssa.Call:
		if fn := v.Call.StaticCallee(); fn != nil {
			if fn.Signature.Recv() != nil && len(v.Call.Args) > 0 {
				if x := describe(v.Call.Args[0]); x != "" {
					return x + "." + fn.Name() + "()"
				}
			}
			return fn.Name() + "()"
		}
	}
	return ""
}

func (t *Texts) recover(v ssa.Value) ([]Text, bool) {
	switch v := v.(type) {
	case *ssa.Const:
		if v.Value == nil || v.Value.Kind() != constant.String {
			return nil, false
		}
		return []Text{{SQL: constant.StringVal(v.Value), Exact: true}}, true
	case *ssa.BinOp:
		if v.Op != token.ADD {
			return nil, false
		}
		var x, y ast.Expr
		if be := t.binops[v.Pos()]; be != nil {
			x, y = ast.Unparen(be.X), ast.Unparen(be.Y)
		}
		return join(t.part(v.X, x), t.part(v.Y, y))
	case *ssa.Phi:
		var all []Text
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
func (t *Texts) load(addr ssa.Value) ([]Text, bool) {
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
			return []Text{{SQL: s, Exact: true}}, true
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
	var all []Text
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
func (t *Texts) param(p *ssa.Parameter) ([]Text, bool) {
	fn := p.Parent()
	if fn.Object() == nil || fn.Object().Exported() || t.escaped[fn] || len(t.callers[fn]) == 0 {
		return nil, false
	}
	i := slices.Index(fn.Params, p) // Params and Args both count a receiver first
	var all []Text
	for _, call := range t.callers[fn] {
		ts, ok := t.of(call.Args[i])
		if !ok {
			return nil, false
		}
		at := t.arg(call, i)
		for _, tx := range ts {
			if tx.At == nil {
				tx.At = at
			}
			all = append(all, tx)
		}
	}
	return all, true
}

// arg returns the syntax of call's argument i, counting a receiver first
// as SSA does, or nil.
func (t *Texts) arg(call *ssa.CallCommon, i int) ast.Expr {
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

// Arg returns the syntax of argument i (not counting a receiver) of the
// call whose open parenthesis is at lparen, or nil.
func (t *Texts) Arg(lparen token.Pos, i int) ast.Expr {
	ce := t.calls[lparen]
	if ce == nil || i < 0 || i >= len(ce.Args) {
		return nil
	}
	return ce.Args[i]
}

// wideVerb matches a formatting verb's width or precision of five digits or
// more, which would print a text too large to check.
var wideVerb = regexp.MustCompile(`%[-+# 0]*(\[\d+\])?\d{5,}|%[^%a-zA-Z]*\.\d{5,}`)

// sprintf recovers fmt.Sprintf with a constant format. Arguments that are
// not recoverable print as a placeholder, whatever their verb.
func (t *Texts) sprintf(call *ssa.CallCommon) ([]Text, bool) {
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
	var syntax []ast.Expr
	if ce := t.calls[call.Pos()]; ce != nil && len(ce.Args) == len(args)+1 && !ce.Ellipsis.IsValid() {
		syntax = ce.Args[1:]
	}
	// Each argument is a set of alternatives; the texts are every choice.
	var vals [][]any
	for i, a := range args {
		if mi, ok := a.(*ssa.MakeInterface); ok {
			a = mi.X
		}
		var at ast.Expr
		if syntax != nil {
			at = syntax[i]
		}
		var alts []any
		if c, ok := a.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() != constant.String {
			alts = []any{constant.Val(c.Value)}
		} else if isString(a.Type()) {
			for _, tx := range t.part(a, at) {
				alts = append(alts, tx)
			}
		} else {
			alts = []any{Text{SQL: t.hole(a, at)}}
		}
		vals = append(vals, alts)
	}
	var out []Text
	for _, f := range format {
		if wideVerb.MatchString(f.SQL) {
			return nil, false
		}
		for _, picked := range product(vals) {
			exact := f.Exact
			printed := make([]any, len(picked))
			for i, p := range picked {
				if tx, ok := p.(Text); ok {
					exact = exact && tx.Exact
					printed[i] = tx.SQL
				} else {
					printed[i] = p
				}
			}
			s := fmt.Sprintf(f.SQL, printed...)
			if len(s) > pgsql.MaxLen {
				return nil, false
			}
			out = append(out, Text{SQL: s, Exact: exact})
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

// join concatenates every text of xs with every text of ys, or reports
// false when a result would be too large to check or there are too many.
func join(xs, ys []Text) ([]Text, bool) {
	if len(xs)*len(ys) > maxAll {
		return nil, false
	}
	var out []Text
	for _, x := range xs {
		for _, y := range ys {
			if len(x.SQL)+len(y.SQL) > pgsql.MaxLen {
				return nil, false
			}
			at := x.At
			if at == nil {
				at = y.At
			}
			out = append(out, Text{SQL: x.SQL + y.SQL, Exact: x.Exact && y.Exact, At: at})
		}
	}
	return out, true
}

func dedupe(ts []Text) []Text {
	seen := make(map[Text]bool, len(ts))
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
