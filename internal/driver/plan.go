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

// A commandFlag is one of the command's own flags: those that only a run
// in process has (see inprocess.go), which go vet does not, and the
// output flags. The rules' settings are the analyzers' flags (see
// config.Settings); -C and -explain are rewritten before any flag is
// parsed (see cutChdir and explain).
type commandFlag struct {
	name  string
	kind  flagKind
	def   string // the default value, as the flag package would print it
	usage string // as -h prints it
	// inProcess reports that only a run in process has the flag: given,
	// the run stays in process rather than going through go vet.
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

// noEffect is the usage of a flag that is accepted, so that scripts that
// give it keep working, and does nothing.
const noEffect = "no effect; accepted for scripts that give it (it keeps the run in process)"

// commandFlags is the table of the command's own flags.
var commandFlags = []commandFlag{
	{name: "json", kind: boolFlag, usage: "print the findings as JSON on stdout, and exit 0 with findings"},
	{name: "format", kind: stringFlag, sarif: true, usage: "sarif: print the findings as one SARIF 2.1.0 run on stdout, and exit 0 with findings"},
	// Go vet always analyses test files: -test=false keeps the run in
	// process, and so does -test given at all, which is how a run asks
	// to stay in process.
	{name: "test", kind: boolFlag, def: "true", inProcess: true, sarif: true,
		usage: "analyse test files too; given at all, the run is in process, and false leaves test files out"},
	{name: "fix", kind: boolFlag, inProcess: true,
		usage: "apply the findings' suggested fixes to the files instead of printing the findings; conflicting fixes stop it before any file is written"},
	{name: "diff", kind: boolFlag, inProcess: true, usage: "with -fix, print a unified diff of what it would write, and write nothing"},
	{name: "source", kind: boolFlag, inProcess: true, usage: noEffect},
	{name: "v", kind: boolFlag, inProcess: true,
		usage: "print on stderr what is analysed, how many packages and how long it took, and with -fix what was applied"},
	{name: "all", kind: boolFlag, inProcess: true, usage: noEffect},
	{name: "tags", kind: stringFlag, inProcess: true, usage: "comma-separated build tags for the go command's listing of the packages"},
	{name: "debug", kind: stringFlag, inProcess: true,
		usage: "debug letters: p analyses one package at a time, t prints the packages that took most of the time, v is -v; f and s have no effect"},
	{name: "cpuprofile", kind: stringFlag, inProcess: true, usage: "write a CPU profile of the run to this file"},
	{name: "memprofile", kind: stringFlag, inProcess: true, usage: "write a memory profile to this file at the end of the run"},
	{name: "trace", kind: stringFlag, inProcess: true, usage: "write an execution trace of the run to this file"},
	{name: "c", kind: intFlag, def: "-1", inProcess: true,
		usage: "with `N` of 0 or more, print each finding's lines with N lines of context before and after them"},
	// What go vet asks a vet tool: x/tools' multichecker answers both.
	{name: "flags", kind: boolFlag, usage: "print the flags as JSON, as go vet asks a vet tool"},
	{name: "V", kind: bareFlag, usage: "print the version (-V=full) and exit"},
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
// its Flags, so that parsing sets them) and commandFlags, each with its
// usage. It prints nothing.
func newFlagSet(analyzers []*analysis.Analyzer) *flag.FlagSet {
	fs := flag.NewFlagSet("leaseguard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, a := range analyzers {
		fs.Var(new(triState), a.Name, fmt.Sprintf("run the %s rule; given true for some rules, only those run, given false, all but those", a.Name))
		a.Flags.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, a.Name+"."+f.Name, f.Usage) })
	}
	for _, c := range commandFlags {
		switch c.kind {
		case boolFlag:
			fs.Bool(c.name, c.def == "true", c.usage)
		case stringFlag:
			fs.String(c.name, c.def, c.usage)
		case intFlag:
			n, _ := strconv.Atoi(c.def)
			fs.Int(c.name, n, c.usage)
		case bareFlag:
			fs.Var(new(boolValue), c.name, c.usage)
		}
	}
	return fs
}

// A plan is what a standalone run does, from its arguments parsed once.
type plan struct {
	format   string   // "" (text), "json" or "sarif"
	tests    bool     // -test: analyse test files too (go vet always does)
	patterns []string // the packages to analyse, as given
	// vetFlags are the analyzers' flags given, as given, for go vet.
	vetFlags []string
	// inProcess is the first flag given that only a run in process
	// has, or "".
	inProcess string
	// rules are the analyzers whose findings a run in process reports:
	// all, or those that their -NAME flags choose, as go vet chooses.
	rules []*analysis.Analyzer
	// What the flags that only a run in process has ask for.
	fix, diff  bool
	context    int      // -c: lines of context around a finding's; -1: none
	verbose    bool     // -v, or v among -debug's letters
	sequential bool     // p among -debug's letters
	timing     bool     // t among -debug's letters
	buildFlags []string // -tags, for the go command's listings
	profiles   profiles
}

// profiles are the files that -cpuprofile, -memprofile and -trace name.
type profiles struct{ cpu, mem, trace string }

// errAsGiven says that arguments are left to x/tools' multichecker as
// they are, which answers without analysing anything: they ask for the
// flags as go vet does (-flags), the version (-V), or name no package.
var errAsGiven = errors.New("arguments for the checker as given")

// errHelp says that the arguments ask for the usage (-h, -help).
var errHelp = errors.New("help requested")

// errBadFlag says that a flag does not parse: the flag package has said
// why, in one line.
var errBadFlag = errors.New("bad flag")

// parse plans a standalone run of args (after cutChdir and explain),
// setting the analyzers' flags as it goes. The error is errAsGiven,
// errHelp, errBadFlag (its line written to stderr), or one that the
// command prints and exits 2 with: an output flag that does not go with
// another.
func parse(args []string, analyzers []*analysis.Analyzer, stderr io.Writer) (*plan, error) {
	fs := newFlagSet(analyzers)
	fs.SetOutput(stderr)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return nil, errHelp
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
	}
	p.rules = chosen(fs, analyzers)
	p.fix, p.diff = isTrue(fs, "fix"), isTrue(fs, "diff")
	p.context, _ = strconv.Atoi(fs.Lookup("c").Value.String())
	debug := fs.Lookup("debug").Value.String()
	p.verbose = isTrue(fs, "v") || strings.Contains(debug, "v")
	p.sequential, p.timing = strings.Contains(debug, "p"), strings.Contains(debug, "t")
	if tags := fs.Lookup("tags").Value.String(); tags != "" {
		p.buildFlags = []string{"-tags=" + tags}
	}
	p.profiles = profiles{cpu: fs.Lookup("cpuprofile").Value.String(), mem: fs.Lookup("memprofile").Value.String(), trace: fs.Lookup("trace").Value.String()}
	return p, nil
}

// chosen returns the analyzers that their -NAME flags in fs choose, as
// go vet and x/tools' checkers choose them: those given true, if any;
// else all but those given false.
func chosen(fs *flag.FlagSet, analyzers []*analysis.Analyzer) []*analysis.Analyzer {
	var on, off []*analysis.Analyzer
	for _, a := range analyzers {
		switch *fs.Lookup(a.Name).Value.(*triState) {
		case setTrue:
			on = append(on, a)
		case setFalse:
			off = append(off, a)
		}
	}
	if len(on) > 0 {
		return on
	}
	return slices.DeleteFunc(slices.Clone(analyzers), func(a *analysis.Analyzer) bool { return slices.Contains(off, a) })
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
		return true // unknown: parse says so
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

// A triState is a bool flag that knows whether it was given: an
// analyzer's -NAME.
type triState int

const (
	unset triState = iota
	setTrue
	setFalse
)

func (t *triState) String() string {
	if t != nil && *t == setFalse {
		return "false"
	}
	return "true"
}

func (t *triState) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*t = setFalse
	if b {
		*t = setTrue
	}
	return nil
}

func (t *triState) IsBoolFlag() bool { return true }

// boolValue is a flag that may be given bare, or with any value (-V=full).
type boolValue struct{ set bool }

func (b *boolValue) String() string   { return "" }
func (b *boolValue) Set(string) error { b.set = true; return nil }
func (b *boolValue) IsBoolFlag() bool { return true }
