package driver

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// A commandFlag is one of the command's own flags: the in-process
// checker's (x/tools' checker, which the command runs when go vet cannot
// serve it) and the command's output flags. The rules' settings are the
// analyzers' flags (see config.Settings); -C and -explain are rewritten
// before any flag is parsed (see cutChdir and explain).
type commandFlag struct {
	name string
	kind flagKind
	def  string // the default value, as the flag package would print it
	// inProcess reports that only the in-process checker has the flag:
	// given, the run stays in process rather than going through go vet.
	inProcess bool
	// sarif reports that the flag goes with -format sarif.
	sarif bool
}

type flagKind int

const (
	boolFlag   flagKind = iota
	stringFlag          // takes a value
	intFlag             // takes a number
	bareFlag            // given bare or with any value: -V, -V=full
)

// commandFlags is the table of the command's own flags.
var commandFlags = []commandFlag{
	{name: "json", kind: boolFlag},
	{name: "format", kind: stringFlag, sarif: true},
	// Go vet always analyses test files: -test=false keeps the run in
	// process, and so does -test given at all, which is how a run asks
	// for the in-process checker.
	{name: "test", kind: boolFlag, def: "true", inProcess: true, sarif: true},
	{name: "fix", kind: boolFlag, inProcess: true},
	{name: "diff", kind: boolFlag, inProcess: true},
	{name: "source", kind: boolFlag, inProcess: true},
	{name: "v", kind: boolFlag, inProcess: true},
	{name: "all", kind: boolFlag, inProcess: true},
	{name: "tags", kind: stringFlag, inProcess: true},
	{name: "debug", kind: stringFlag, inProcess: true},
	{name: "cpuprofile", kind: stringFlag, inProcess: true},
	{name: "memprofile", kind: stringFlag, inProcess: true},
	{name: "trace", kind: stringFlag, inProcess: true},
	{name: "c", kind: intFlag, def: "-1", inProcess: true},
	// What go vet asks a vet tool: the checker answers both.
	{name: "flags", kind: boolFlag},
	{name: "V", kind: bareFlag},
}

// lookupFlag returns the command flag name, or nil.
func lookupFlag(name string) *commandFlag {
	for i := range commandFlags {
		if commandFlags[i].name == name {
			return &commandFlags[i]
		}
	}
	return nil
}

// newFlagSet returns a flag set that knows every flag of a standalone
// run: the analyzers' (each analyzer's name, and its settings bound to
// its Flags, so that parsing sets them) and commandFlags. It prints
// nothing.
func newFlagSet(analyzers []*analysis.Analyzer) *flag.FlagSet {
	fs := flag.NewFlagSet("leaseguard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, a := range analyzers {
		fs.Var(new(boolValue), a.Name, "")
		a.Flags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, a.Name+"."+f.Name, "") })
	}
	for _, c := range commandFlags {
		switch c.kind {
		case boolFlag:
			fs.Bool(c.name, c.def == "true", "")
		case stringFlag:
			fs.String(c.name, c.def, "")
		case intFlag:
			n, _ := strconv.Atoi(c.def)
			fs.Int(c.name, n, "")
		case bareFlag:
			fs.Var(new(boolValue), c.name, "")
		}
	}
	return fs
}

// A plan is what a standalone run does, from its arguments parsed once.
type plan struct {
	format   string   // "" (text), "json" or "sarif"
	tests    bool     // -test: analyse test files too (go vet always does)
	patterns []string // the packages to analyse, as given
	// checkerFlags are the flags given, as given, for the in-process
	// checker: all but -json, -format and --.
	checkerFlags []string
	// vetFlags are the analyzers' flags given, as given, for go vet.
	vetFlags []string
	// inProcess is the first flag given that only the in-process
	// checker has, or "".
	inProcess string
}

// errAsGiven says that arguments are left to the in-process checker as
// they are: they ask for help, for the checker's flags or version, or
// name no package.
var errAsGiven = errors.New("arguments for the checker as given")

// errBadFlag says that a flag does not parse: the flag package has said
// why, in one line.
var errBadFlag = errors.New("bad flag")

// parse plans a standalone run of args (after cutChdir and explain),
// setting the analyzers' flags as it goes. The error is errAsGiven,
// errBadFlag (its line written to stderr), or one that the command prints
// and exits 2 with: an output flag that does not go with another.
func parse(args []string, analyzers []*analysis.Analyzer, stderr io.Writer) (*plan, error) {
	fs := newFlagSet(analyzers)
	fs.SetOutput(stderr)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return nil, errAsGiven // the checker prints every flag
	case err != nil:
		return nil, errBadFlag
	case isTrue(fs, "flags") || given(fs, "V"):
		return nil, errAsGiven
	}
	p := &plan{patterns: fs.Args(), tests: isTrue(fs, "test")}
	switch format := fs.Lookup("format").Value.String(); {
	case format == "sarif" && fs.NArg() == 0:
		return nil, errors.New("-format sarif needs package patterns")
	case format == "sarif":
		p.format = "sarif"
	case given(fs, "format"):
		return nil, fmt.Errorf("-format %q: the only format is sarif (see also -json)", format)
	case fs.NArg() == 0:
		return nil, errAsGiven
	case isTrue(fs, "json"):
		p.format = "json"
	}
	for _, group := range flagGroups(fs, args[:len(args)-len(p.patterns)]) {
		name, _, _ := strings.Cut(strings.TrimLeft(group[0], "-"), "=")
		c := lookupFlag(name)
		switch {
		case p.format == "sarif" && c != nil && !c.sarif:
			return nil, fmt.Errorf("-format sarif and -%s do not go together: SARIF is the whole output", name)
		case c == nil:
			p.vetFlags = append(p.vetFlags, group...)
		case c.inProcess && p.inProcess == "":
			p.inProcess = name
		}
		if c == nil || c.name != "json" && c.name != "format" {
			p.checkerFlags = append(p.checkerFlags, group...)
		}
	}
	return p, nil
}

// checkerArgs returns the arguments for the in-process checker: the
// flags, then the given packages.
func (p *plan) checkerArgs(packages []string) []string {
	out := slices.Clone(p.checkerFlags)
	if p.format == "json" {
		out = append(out, "-json")
	}
	return append(append(out, "--"), packages...)
}

// flagGroups splits args, flags that fs parses, into one group per flag:
// the flag, and its value where it is the next argument. A -- ends the
// flags and is in no group.
func flagGroups(fs *flag.FlagSet, args []string) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && !isBool(fs, name) && i+1 < len(args) {
			out = append(out, args[i:i+2])
			i++
			continue
		}
		out = append(out, args[i:i+1])
	}
	return out
}

// given reports whether the flag name was given to fs.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// isTrue reports whether the bool flag name of fs is true.
func isTrue(fs *flag.FlagSet, name string) bool { return fs.Lookup(name).Value.String() == "true" }

// isBool reports whether fs has a flag name that is given bare.
func isBool(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return true // unknown: the checker says so
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// cutChdir returns args without -C dir (-C=dir, --C dir), given anywhere
// among the flags before the first package, and dir ("" without one).
func cutChdir(args []string, analyzers []*analysis.Analyzer) (rest []string, dir string, err error) {
	fs := newFlagSet(analyzers)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(rest, args[i:]...), dir, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case name == "C" && dir != "":
			return nil, "", errors.New("-C given twice")
		case name == "C" && !hasValue && i+1 == len(args):
			return nil, "", errors.New("-C needs a directory")
		case name == "C" && !hasValue:
			i++
			dir = args[i]
		case name == "C":
			dir = value
		case !hasValue && !isBool(fs, name) && i+1 < len(args):
			rest = append(rest, a, args[i+1]) // a flag and its value
			i++
		default:
			rest = append(rest, a)
		}
		if name == "C" && dir == "" {
			return nil, "", errors.New("-C needs a directory")
		}
	}
	return rest, dir, nil
}

// boolValue is a flag that may be given bare, or with any value (-V=full).
type boolValue struct{ set bool }

func (b *boolValue) String() string   { return "" }
func (b *boolValue) Set(string) error { b.set = true; return nil }
func (b *boolValue) IsBoolFlag() bool { return true }
