package driver

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want plan   // ignored when err is set
		err  string // errAsGiven's text, or the start of the message
	}{
		{
			args: []string{"./..."},
			want: plan{tests: true, patterns: []string{"./..."}},
		},
		{
			// A setting's value in the next argument stays with it; -json
			// is the command's.
			args: []string{"-fence.table", "leases", "-json", "-imports.strict", "./a", "./b"},
			want: plan{
				format: "json", tests: true, patterns: []string{"./a", "./b"},
				vetFlags: []string{"-fence.table", "leases", "-imports.strict"},
			},
		},
		{
			// -json=false is no JSON; -- ends the flags.
			args: []string{"-json=false", "--", "-odd-dir"},
			want: plan{tests: true, patterns: []string{"-odd-dir"}},
		},
		{
			// An analyzer's own flag goes to go vet as it is.
			args: []string{"-clock", "./..."},
			want: plan{tests: true, patterns: []string{"./..."}, vetFlags: []string{"-clock"}},
		},
		{
			// A flag that only a run in process has keeps the run in
			// process, and goes to no go vet.
			args: []string{"-c", "2", "-fix", "-lease.notes", "./..."},
			want: plan{
				tests: true, patterns: []string{"./..."}, inProcess: "c",
				vetFlags: []string{"-lease.notes"},
			},
		},
		{
			args: []string{"-test=false", "./..."},
			want: plan{patterns: []string{"./..."}, inProcess: "test"},
		},
		{
			args: []string{"-format", "sarif", "-test=false", "-fence.tables=orders", "./..."},
			want: plan{
				format: "sarif", patterns: []string{"./..."}, inProcess: "test",
				vetFlags: []string{"-fence.tables=orders"},
			},
		},
		{args: []string{"-format=sarif", "-json", "./..."}, err: "-format sarif and -json do not go together"},
		{args: []string{"-format=sarif", "-diff", "./..."}, err: "-format sarif and -diff do not go together"},
		{args: []string{"-format", "sarif"}, err: "-format sarif needs package patterns"},
		{args: []string{"-format", "xml", "./..."}, err: `-format "xml": the only format is sarif`},
		{args: []string{"-format=", "./..."}, err: `-format "": the only format is sarif`},
		// A flag that does not parse, in the flag package's words (see
		// TestParseBadFlag).
		{args: []string{"-nosuch", "./..."}, err: errBadFlag.Error()},
		{args: []string{"-format=sarif", "-fence.expiry-column", "a b", "./..."}, err: errBadFlag.Error()},
		// The usage; left to the checker: go vet's questions, no package.
		{args: []string{"-h"}, err: errHelp.Error()},
		{args: []string{"-help", "./..."}, err: errHelp.Error()},
		{args: []string{"-json"}, err: errAsGiven.Error()},
		{args: []string{"-flags"}, err: errAsGiven.Error()},
		{args: []string{"-V=full"}, err: errAsGiven.Error()},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p, err := parse(tc.args, analyzer.New(config.Default()), io.Discard)
			switch {
			case tc.err != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				for _, sentinel := range []error{errAsGiven, errHelp, errBadFlag} {
					if tc.err == sentinel.Error() && !errors.Is(err, sentinel) {
						t.Fatalf("error %v is not %v", err, sentinel)
					}
				}
			case err != nil:
				t.Fatal(err)
			default:
				if p.format != tc.want.format || p.tests != tc.want.tests || p.inProcess != tc.want.inProcess ||
					!slices.Equal(p.patterns, tc.want.patterns) ||
					!slices.Equal(p.vetFlags, tc.want.vetFlags) {
					t.Errorf("plan %+v, want %+v", *p, tc.want)
				}
			}
		})
	}
}

// TestParseSetsSettings checks that one parse sets the rules' settings
// that the analyzers read.
func TestParseSetsSettings(t *testing.T) {
	cfg := config.Default()
	if _, err := parse([]string{"-fence.table", "leases", "-lease.packages=example.com/lease/...", "./..."}, analyzer.New(cfg), io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Fence.Table; len(got) != 1 || got[0] != "leases" {
		t.Errorf("fence.table %q, want leases", got)
	}
	if got := cfg.Lease.Packages; len(got) != 1 || got[0] != "example.com/lease/..." {
		t.Errorf("lease.packages %q", got)
	}
}

// TestParseBadFlag checks that a flag that does not parse is said in
// one line, whatever the output format, as the flag package says it.
func TestParseBadFlag(t *testing.T) {
	for _, args := range [][]string{
		{"-fence.expiry-column=1st", "./..."},
		{"-format=sarif", "-fence.expiry-column", "1st", "./..."},
	} {
		var b bytes.Buffer
		if _, err := parse(args, analyzer.New(config.Default()), &b); !errors.Is(err, errBadFlag) {
			t.Fatalf("%q: error %v, want errBadFlag", args, err)
		}
		if want := `invalid value "1st" for flag -fence.expiry-column: `; !strings.HasPrefix(b.String(), want) || strings.Count(b.String(), "\n") != 1 {
			t.Errorf("%q: stderr %q, want one line that starts %q", args, b.String(), want)
		}
	}
}

// TestParseInProcess checks what the flags that only a run in process
// has ask of it, and which rules the -NAME flags choose.
func TestParseInProcess(t *testing.T) {
	p, err := parse([]string{"-fix", "-diff", "-c", "2", "-tags=pg,integration", "-debug=pt", "-cpuprofile", "cpu.out", "-memprofile=mem.out", "-trace=trace.out", "./..."},
		analyzer.New(config.Default()), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !p.fix || !p.diff || p.context != 2 || p.verbose || !p.sequential || !p.timing ||
		!slices.Equal(p.buildFlags, []string{"-tags=pg,integration"}) || p.profiles != (profiles{"cpu.out", "mem.out", "trace.out"}) {
		t.Errorf("plan %+v", *p)
	}
	for _, tc := range []struct {
		args  []string
		rules []string
	}{
		{[]string{"./..."}, []string{"lease", "imports", "clock", "fence"}},
		{[]string{"-v", "./..."}, []string{"lease", "imports", "clock", "fence"}},
		{[]string{"-debug=v", "-c=0", "./..."}, []string{"lease", "imports", "clock", "fence"}},
		{[]string{"-clock", "-fence=true", "./..."}, []string{"clock", "fence"}},
		{[]string{"-imports=false", "./..."}, []string{"lease", "clock", "fence"}},
		{[]string{"-imports=false", "-clock", "./..."}, []string{"clock"}},
	} {
		p, err := parse(tc.args, analyzer.New(config.Default()), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, a := range p.rules {
			rules = append(rules, a.Name)
		}
		if !slices.Equal(rules, tc.rules) {
			t.Errorf("%q: rules %q, want %q", tc.args, rules, tc.rules)
		}
		if wantVerbose := tc.args[0] != "-clock" && tc.args[0] != "-imports=false" && tc.args[0] != "./..."; p.verbose != wantVerbose {
			t.Errorf("%q: verbose %t", tc.args, p.verbose)
		}
		if tc.args[0] == "-debug=v" && p.context != 0 || tc.args[0] == "./..." && p.context != -1 {
			t.Errorf("%q: context %d", tc.args, p.context)
		}
	}
}

func TestCutChdir(t *testing.T) {
	analyzers := analyzer.New(config.Default())
	for _, tc := range []struct {
		args, rest []string
		dir, err   string
	}{
		{args: []string{"-C", "mod", "./..."}, rest: []string{"./..."}, dir: "mod"},
		{args: []string{"-json", "-C=mod", "./..."}, rest: []string{"-json", "./..."}, dir: "mod"},
		// A setting's value that looks like -C is the setting's.
		{args: []string{"-fence.table", "-C", "./..."}, rest: []string{"-fence.table", "-C", "./..."}},
		// After the first package, -C is a pattern's business.
		{args: []string{"./...", "-C", "mod"}, rest: []string{"./...", "-C", "mod"}},
		{args: []string{"-C"}, err: "-C needs a directory"},
		{args: []string{"-C=", "./..."}, err: "-C needs a directory"},
		{args: []string{"-C", "a", "-C", "b", "./..."}, err: "-C given twice"},
	} {
		rest, dir, err := cutChdir(tc.args, analyzers)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case dir != tc.dir || !slices.Equal(rest, tc.rest):
			t.Errorf("%q: dir %q, rest %q; want %q, %q", tc.args, dir, rest, tc.dir, tc.rest)
		}
	}
}
