package config

import (
	"fmt"
	"go/token"
	"go/types"
	"strings"
)

// A fence.table or fence.tables value may name the Go field or package
// variable that holds a table's name at run time (see GoName). The fence
// rule matches such a name against where the SQL's table name is loaded
// from, by text: a name that resolves to nothing matches nothing, and the
// setting would check nothing in silence. UnresolvedGoNames says so, in
// the analysis of each lease package, as far as that package's types can
// tell:
//
//   - a name in the lease package itself is looked up in full: its
//     package variables, and its types, declared at package level or
//     inside a function, with their fields;
//   - a name in another package is looked up only when it is exported
//     (an unexported one cannot be read from another package, and export
//     data need not hold it): a variable of a package that the lease
//     package imports, a type's field in any package whose type is
//     loaded, a type of a package that the lease package imports;
//   - a name whose package the lease package does not import, directly or
//     through others, cannot be decided there, and is left alone: the
//     settings are the same for every lease package, and another one may
//     import it.

// A SettingError is a setting whose value aims at nothing: it is well
// formed, and names nothing that exists. Its text starts with the flag and
// the value (-fence.table "…": …); drivers that see only the text of a
// finding (go vet's JSON output) tell it by IsSettingError.
type SettingError struct {
	Setting string // RULE.KEY
	Value   string
	Why     string // what is wrong, and what was expected
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("-%s %q: %s", e.Setting, e.Value, e.Why)
}

// IsSettingError reports whether msg, a finding's message, is a
// SettingError's.
func IsSettingError(msg string) bool {
	for _, s := range Default().settings() {
		if strings.HasPrefix(msg, "-"+s.rule+"."+s.key+` "`) {
			return true
		}
	}
	return false
}

// UnresolvedGoNames returns an error for each fence.table and
// fence.tables value that names a Go field or variable (see GoName) that
// pkg, a lease package with its imports, shows not to exist; none when
// every such name resolves, or cannot be decided from pkg (see above).
func (f *Fence) UnresolvedGoNames(pkg *types.Package) []*SettingError {
	var errs []*SettingError
	for _, s := range []struct {
		key   string
		names Names
	}{{"table", f.Table}, {"tables", f.Tables}} {
		for _, name := range s.names {
			if !GoName(name) {
				continue
			}
			if why := unresolved(pkg, name); why != "" {
				errs = append(errs, &SettingError{Setting: "fence." + s.key, Value: name,
					Why: why + "; want pkg/path.Type.Field or pkg/path.Var, the Go field or package variable that holds the table's name"})
			}
		}
	}
	return errs
}

// unresolved says why name, pkg/path.Type.Field or pkg/path.Var, names
// nothing that exists, as far as pkg can tell; "" when it resolves or
// cannot be decided. The package's last path element may hold dots
// (gopkg.in/yaml.v3.Var): each way of reading it is tried, and the name
// resolves when one of them does.
func unresolved(pkg *types.Package, name string) string {
	slash := strings.LastIndexByte(name, '/')
	parts := strings.Split(name[slash+1:], ".")
	loaded := make(map[string]*types.Package)
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if loaded[p.Path()] != nil {
			return
		}
		loaded[p.Path()] = p
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	walk(pkg)
	why := ""
	for k := 1; k < len(parts) && k <= 2; k++ {
		path, ids := name[:slash+1]+strings.Join(parts[:k], "."), parts[k:]
		p := loaded[path]
		if p == nil || len(ids) > 2 {
			continue
		}
		w, decided := lookup(pkg, p, ids)
		if !decided || w == "" {
			return ""
		}
		why = w
	}
	return why
}

// lookup looks ids, Var or Type and Field, up in p as the lease package
// lease sees it, and says why they name nothing ("" when they resolve);
// decided is false when lease's view of p cannot tell (see above).
func lookup(lease, p *types.Package, ids []string) (why string, decided bool) {
	own := p == lease
	if !own && !token.IsExported(ids[0]) {
		return "", false
	}
	direct := own
	for _, imp := range lease.Imports() {
		direct = direct || imp == p
	}
	obj := p.Scope().Lookup(ids[0])
	if len(ids) == 1 {
		switch {
		case obj == nil && !direct:
			return "", false
		case obj == nil:
			return fmt.Sprintf("%s has no package variable %s", p.Path(), ids[0]), true
		}
		if _, ok := obj.(*types.Var); !ok {
			return fmt.Sprintf("%s.%s is a %s, not a variable", p.Path(), ids[0], kind(obj)), true
		}
		return "", true
	}
	tn, _ := obj.(*types.TypeName)
	if tn == nil && own {
		tn = localType(p.Scope(), ids[0])
	}
	switch {
	case tn == nil && obj != nil:
		return fmt.Sprintf("%s.%s is a %s, not a type", p.Path(), ids[0], kind(obj)), true
	case tn == nil && !direct:
		return "", false
	case tn == nil:
		return fmt.Sprintf("%s has no type %s", p.Path(), ids[0]), true
	}
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return fmt.Sprintf("%s.%s is no struct type", p.Path(), ids[0]), true
	}
	for i := range st.NumFields() {
		if st.Field(i).Name() == ids[1] {
			return "", true
		}
	}
	why = fmt.Sprintf("%s.%s has no field %s", p.Path(), ids[0], ids[1])
	if f, _, _ := types.LookupFieldOrMethod(tn.Type(), true, p, ids[1]); f != nil {
		if v, ok := f.(*types.Var); ok && v.IsField() {
			why += " of its own (a promoted field is named by the type that declares it)"
		}
	}
	return why, true
}

// localType returns a type named name declared in a function of the
// scope's package, or nil.
func localType(s *types.Scope, name string) *types.TypeName {
	for c := range s.Children() {
		if tn, ok := c.Lookup(name).(*types.TypeName); ok {
			return tn
		}
		if tn := localType(c, name); tn != nil {
			return tn
		}
	}
	return nil
}

// kind names what obj declares.
func kind(obj types.Object) string {
	switch obj.(type) {
	case *types.Const:
		return "constant"
	case *types.Func:
		return "function"
	case *types.TypeName:
		return "type"
	case *types.Var:
		return "variable"
	}
	return "name"
}
