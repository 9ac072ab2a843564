// Package sqltext recovers, from a package's SSA form, the SQL texts that
// its calls may send: constants and their concatenations, fmt.Sprintf with
// a constant format, unexported fields and package variables assigned only
// such values, files embedded with //go:embed, parameters of functions
// that only the package calls, and what a function of the package returns
// (q, args := queryWithExpiry(format, ttl)), read with its parameters bound
// to the call's arguments. A part that is not constant (a table name
// chosen at run time) stands in as an identifier that names the Go
// expression it came from, so that the text still parses and a message can
// say "the table named by c.tableName". Anything else is not guessed at.
//
// It also maps offsets in a recovered text back to the string literals
// that spell it, so that findings land where the user wrote the SQL.
package sqltext

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
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
	// prepares are the calls that prepare a named statement (pgx's
	// Prepare(ctx, name, sql)), by the name when it is a constant.
	prepares map[string][]*ssa.CallCommon

	memo  map[ssa.Value][]Text
	known map[ssa.Value]bool // memo holds the value; false with memo nil: not recoverable
	busy  map[ssa.Value]bool // on the stack: a cycle is not recoverable

	// frames are the calls of the package's functions whose results are
	// being read, outermost first: a parameter of one stands for that
	// call's argument (see returned).
	frames []frame
}

// frame is a call whose callee's results are being read.
type frame struct {
	fn   *ssa.Function
	call *ssa.CallCommon
}

// New indexes a package for recovery: files and funcs are the package's
// syntax and the SSA functions to read stores and calls from.
func New(pkg *ssa.Package, files []*ast.File, funcs []*ssa.Function, fset *token.FileSet, info *types.Info) *Texts {
	t := &Texts{
		pkg:      pkg,
		fset:     fset,
		info:     info,
		calls:    make(map[token.Pos]*ast.CallExpr),
		binops:   make(map[token.Pos]*ast.BinaryExpr),
		embeds:   embeds(fset, files, info),
		exprNum:  make(map[any]int),
		stores:   make(map[any][]ssa.Value),
		escaped:  make(map[any]bool),
		callers:  make(map[*ssa.Function][]*ssa.CallCommon),
		prepares: make(map[string][]*ssa.CallCommon),
		memo:     make(map[ssa.Value][]Text),
		known:    make(map[ssa.Value]bool),
		busy:     make(map[ssa.Value]bool),
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
		if name, ok := prepares(call); ok {
			t.prepares[name] = append(t.prepares[name], call)
		}
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
	// A value of a function whose results are being read for one call
	// holds what that call makes it hold: it is not kept for another.
	keep := !t.framed(parent(v))
	if ok, done := t.known[v]; done && keep {
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
	if keep {
		t.memo[v], t.known[v] = ts, ok
	}
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
		if ts, ok := t.sprintf(&v.Call); ok {
			return ts, true
		}
		return t.returned(&v.Call, 0)
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok {
			return t.returned(&call.Call, v.Index)
		}
	case *ssa.Parameter:
		if call, i, k, ok := t.binding(v); ok {
			return t.bound(call, i, k)
		}
		return t.param(v)
	}
	return nil, false
}

// returned recovers result i of call, a call of a function of the package
// (not a method called through an interface, nor a function value): what
// every return of the function may give, its parameters standing for the
// call's arguments, so that a helper that takes a format or a table and
// returns the statement is read at each call with what that call passes.
// A function whose results are already being read (it calls itself) is
// not recovered.
func (t *Texts) returned(call *ssa.CallCommon, i int) ([]Text, bool) {
	fn := call.StaticCallee()
	if fn == nil || fn.Pkg != t.pkg || len(fn.Blocks) == 0 || t.framed(fn) {
		return nil, false
	}
	var results []ssa.Value
	for _, b := range fn.Blocks {
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			results = append(results, ret.Results[i])
		}
	}
	if len(results) == 0 {
		return nil, false // it never returns
	}
	t.frames = append(t.frames, frame{fn: fn, call: call})
	defer func() { t.frames = t.frames[:len(t.frames)-1] }()
	var all []Text
	for _, r := range results {
		ts, ok := t.of(r)
		if !ok {
			return nil, false
		}
		all = append(all, ts...)
	}
	return dedupe(all), true
}

// binding returns the call that p, a parameter of a function whose
// results are being read, stands for, the index of its argument, and the
// frame of the call; false when p's function is not being read.
func (t *Texts) binding(p *ssa.Parameter) (*ssa.CallCommon, int, int, bool) {
	for k := len(t.frames) - 1; k >= 0; k-- {
		if f := t.frames[k]; f.fn == p.Parent() {
			return f.call, slices.Index(f.fn.Params, p), k, true // Params and Args both count a receiver first
		}
	}
	return nil, 0, 0, false
}

// bound recovers argument i of call, made in frame k: in its caller's
// frame, where the caller's own parameters stand for what its caller
// passed. The texts report at the argument, where the statement is chosen.
func (t *Texts) bound(call *ssa.CallCommon, i, k int) ([]Text, bool) {
	saved := t.frames
	t.frames = slices.Clip(t.frames[:k]) // a call read from there appends a frame of its own
	ts, ok := t.of(call.Args[i])
	t.frames = saved
	if !ok {
		return nil, false
	}
	at := t.arg(call, i)
	out := make([]Text, len(ts))
	for j, tx := range ts {
		if tx.At == nil {
			tx.At = at
		}
		out[j] = tx
	}
	return out, true
}

// framed reports whether fn's results are being read for a call.
func (t *Texts) framed(fn *ssa.Function) bool {
	for _, f := range t.frames {
		if f.fn == fn {
			return true
		}
	}
	return false
}

// parent returns the function that v belongs to, or nil for a constant,
// a global or a function.
func parent(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case ssa.Instruction:
		return v.Parent()
	case *ssa.Parameter:
		return v.Parent()
	case *ssa.FreeVar:
		return v.Parent()
	}
	return nil
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
	if fn.Object() == nil || fn.Object().Exported() || t.escaped[fn] {
		return nil, false
	}
	return t.passed(p, false)
}

// passed recovers a parameter from the arguments of the package's own
// calls of its function, each text reporting at its call's argument; false
// when the package never calls the function directly, or a call's
// argument is not recoverable. With some, the calls whose argument is not
// recoverable are left out, and it is false only when no call's is.
func (t *Texts) passed(p *ssa.Parameter, some bool) ([]Text, bool) {
	fn := p.Parent()
	i := slices.Index(fn.Params, p) // Params and Args both count a receiver first
	var all []Text
	for _, call := range t.callers[fn] {
		ts, ok := t.of(call.Args[i])
		if !ok {
			if some {
				continue
			}
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
	return all, len(all) > 0
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

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}
