package lease

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/leaseguard/leaseguard/analyzer/config"
)

var rules = map[string]bool{"imports": true, "clock": true, "fence": true}

func TestParseAllowArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args  string
		rules []string
		want  string // in the problem; "" for none
	}{
		{" clock -- why", []string{"clock"}, ""},
		{" clock,fence -- why", []string{"clock", "fence"}, ""},
		{" clock, fence -- why", []string{"clock", "fence"}, ""},
		{"\tclock ,\tfence , imports--why", []string{"clock", "fence", "imports"}, ""},
		{" clock -- why -- and more", []string{"clock"}, ""},
		{"", nil, "names no rule"},
		{" -- why", nil, "names no rule"},
		{" clock,", nil, `"clock,": a rule name is empty`},
		{" ,clock -- why", nil, `",clock": a rule name is empty`},
		{" clock fence -- why", nil, `"fence" before -- is not a rule`},
		{" clocks -- why", nil, `unknown rule "clocks" (rules: clock, fence, imports)`},
		{" clock", nil, "clock gives no reason"},
		{" clock --", nil, "clock gives no reason"},
		{" clock --   ", nil, "clock gives no reason"},
		{" clock because", nil, "clock: want //leaseguard:allow RULE -- reason"},
	} {
		got, problem := parseAllowArgs(tc.args, rules)
		if !slices.Equal(got, tc.rules) || !strings.Contains(problem, tc.want) || (tc.want == "") != (problem == "") {
			t.Errorf("parseAllowArgs(%q) = %q, %q; want %q, a problem containing %q", tc.args, got, problem, tc.rules, tc.want)
		}
	}
}

func TestParseDirective(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, verb, problem string
	}{
		{"//leaseguard:lease", "lease", ""},
		{"//leaseguard:lease \t", "lease", ""},
		{"//leaseguard:allow clock -- x", "allow", ""},
		{"//leaseguard:allow", "allow", ""},
		{"// Package lease elects a writer.", "", ""},
		{"//go:build linux", "", ""},
		{"// leaseguard: lease packages carry the directive", "", ""},
		{"// leaseguard: the tool", "", ""},
		{"// leaseguardian:lease", "", ""},
		{"//\t//leaseguard:lease", "", ""},
		{"// leaseguard:lease", "lease", `malformed directive "// leaseguard:lease": write //leaseguard:lease`},
		{"//leaseguard: lease", "lease", `malformed directive "//leaseguard: lease"`},
		{"/*leaseguard:lease*/", "lease", `malformed directive "/*leaseguard:lease*/"`},
		{"/* leaseguard : lease */", "lease", "malformed directive"},
		{"//LEASEGUARD:LEASE", "lease", "malformed directive"},
		{"// leaseguard:lease is the directive", "lease", "malformed directive"},
		{"//leaseguard:lease // note", "lease", `takes nothing after it, found "// note"`},
		{"//leaseguard:leas", "lease", `unknown directive "//leaseguard:leas"`},
		{"//leaseguard:laese", "lease", "unknown directive"},
		{"//leaseguard:Lease", "lease", "unknown directive"},
		{"//leaseguard:alow x", "allow", `unknown directive "//leaseguard:alow"`},
		{"//leaseguard:bogus", "", `unknown directive "//leaseguard:bogus"`},
		{"// leaseguard:allow clock -- x", "allow", "write //leaseguard:allow RULE -- reason"},
		// One edit from a directive, in the name or the colon.
		{"//lease-guard:lease", "lease", `malformed directive "//lease-guard:lease": write //leaseguard:lease`},
		{"//lease_guard:lease", "lease", "malformed directive"},
		{"//leasegaurd:lease", "lease", "malformed directive"},
		{"//leaseguard\uff1alease", "lease", `malformed directive "//leaseguard：lease"`},
		{"//leaseguardlease", "lease", "malformed directive"},
		{"//leaseguard;lease", "lease", "malformed directive"},
		{"//leaseguards:lease", "lease", "malformed directive"},
		{"//leasguard:lease", "lease", "malformed directive"},
		{"//LEASE-GUARD:LEASE", "lease", "malformed directive"},
		{"// lease-guard:lease", "lease", "malformed directive"},
		{"/*lease-guard:lease*/", "lease", "malformed directive"},
		{"//lease guard:lease", "lease", "malformed directive"},
		{"//leaseguard lease", "lease", "malformed directive"},
		{"//lease-guard:lease is the directive", "lease", "malformed directive"},
		{"//lease-guard:allow clock -- x", "allow", "write //leaseguard:allow RULE -- reason"},
		{"//leasegaurd:sql", "sql", `malformed directive "//leasegaurd:sql": write //leaseguard:sql`},
		// Prose, and words more than one edit away.
		{"// lease guard: see below", "", ""},
		{"// lease guard:lease is what we called it", "", ""},
		{"// leaseguard lease packages are named by setting", "", ""},
		{"//release:lease", "", ""},
		{"//nolint:leaseguard", "", ""},
		{"//lease-guard: lease", "", ""},
		{"//lease--guard:lease", "", ""},
		{"//lease-guard:leas", "", ""},
		{"// leaseguard's lease", "", ""},
		{"// lease: guard the row", "", ""},
	} {
		d := parseDirective(tc.text)
		if d.verb != tc.verb || !strings.Contains(d.problem, tc.problem) || (tc.problem == "") != (d.problem == "") {
			t.Errorf("parseDirective(%q) = %+v; want verb %q, a problem containing %q", tc.text, d, tc.verb, tc.problem)
		}
	}
}

func FuzzParseDirective(f *testing.F) {
	for _, s := range []string{
		"//leaseguard:lease", "// leaseguard:lease", "//leaseguard:leas", "//leaseguard: lease",
		"/*leaseguard:lease*/", "//leaseguard:lease // note", "//leaseguard:allow clock, fence -- why",
		"// leaseguard: lease packages", "//leaseguard:", "/* leaseguard\t:\tallow */", "//leaseguard:\xff\xfe",
		"// leaseguard:lease " + strings.Repeat("é", 40),
		"//lease-guard:lease", "//leaseguard\uff1alease", "//lease_guard:lease", "//leasegaurd:lease",
		"//lease guard:lease", "//leasegaurd:sql", "// lease guard: see below", "//release:lease",
		"/*\u00a0lease-guard:allow x -- y*/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d := parseDirective(text)
		if d.verb != "" && d.verb != "lease" && d.verb != "allow" && d.verb != "sql" {
			t.Fatalf("verb %q", d.verb)
		}
		oneLine(t, d.problem)
		// The drivers skip a file that Mentioned says has no directive,
		// nor a near miss of one: it must see every comment that is one.
		if comment := strings.HasPrefix(text, "//") && !strings.ContainsAny(text, "\n\r") ||
			len(text) >= 4 && strings.HasPrefix(text, "/*") && strings.HasSuffix(text, "*/") && !strings.Contains(text[2:len(text)-2], "*/"); comment &&
			(d.verb != "" || d.problem != "") && !Mentioned([]byte("package p\n\n"+text+"\n")) {
			t.Fatalf("%q is a directive or a near miss, and Mentioned does not see it", text)
		}
		rest, canonical := strings.CutPrefix(text, directivePrefix)
		if canonical && d.problem == "" && d.verb == "" {
			t.Fatalf("%q starts with %s and is neither a directive nor a near miss", text, directivePrefix)
		}
		exact := canonical && strings.TrimRightFunc(rest, unicode.IsSpace) == "lease"
		if got := d.verb == "lease" && d.problem == ""; got != exact {
			t.Fatalf("%q: the lease directive = %v, want %v", text, got, exact)
		}
		if d.verb == "allow" && d.problem == "" && !strings.HasPrefix(text, directivePrefix+"allow") {
			t.Fatalf("%q: an allow directive without its prefix", text)
		}
	})
}

func FuzzParseAllowArgs(f *testing.F) {
	for _, s := range []string{
		" clock -- why", " clock, fence -- why", "clock,,fence -- x", " clock fence -- x", " clocks -- x",
		"", "--", " clock", " clock because", " , -- ", " imports,clock,fence--r", "\u00a0clock\u2003--\u2003r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		got, problem := parseAllowArgs(args, rules)
		if (got == nil) == (problem == "") {
			t.Fatalf("%q: rules %q and problem %q: want exactly one", args, got, problem)
		}
		oneLine(t, problem)
		if problem != "" {
			return
		}
		for _, r := range got {
			if !rules[r] {
				t.Fatalf("%q: unknown rule %q accepted", args, r)
			}
		}
		// The rules written again, in the canonical form, read the same.
		again, p := parseAllowArgs(" "+strings.Join(got, ", ")+" -- reason", rules)
		if p != "" || !slices.Equal(again, got) {
			t.Fatalf("%q: rules %q read again as %q, %q", args, got, again, p)
		}
	})
}

// oneLine fails unless msg is valid UTF-8 on one line.
func oneLine(t *testing.T, msg string) {
	t.Helper()
	if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("message %q is not one line of text", msg)
	}
}

func TestMentioned(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"//leaseguard:lease\npackage p", true},
		{"// LeaseGuard: lease\npackage p", true},
		{"package p\n\n/* leaseguard:allow clock -- why */", true},
		{"package p\n\n//\u00a0leaseguard:lease", true},
		{`package p; import _ "github.com/leaseguard/leaseguard/leasepkg"`, false},
		{"package p // a lease, see leaseguard's docs", false},
		{"package p", false},
		{"package p // leaseguard", true},
		{"//lease-guard:lease\npackage p", true},
		{"//leasegaurd:lease\npackage p", true},
		{"//lease guard:lease\npackage p", true},
		{"//LEASE_GUARD:lease\npackage p", true},
		{"//leaseguard\uff1alease\npackage p", true},
		{"package p\n\n/*\n\tleasguard:allow clock -- why */", true},
		{"package p // lease guard", true},
		{"package p // release:lease", false},
		{"package p // a lease guards the row", false},
		{"package p\n\nvar x = 1 / 2", false},
		{"package p\n\n//", false},
	} {
		if got := Mentioned([]byte(tc.src)); got != tc.want {
			t.Errorf("Mentioned(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestCandidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plain := write("plain.go", "package p\n")
	marked := write("marked.go", "//leaseguard:lease\npackage p\n")
	missing := filepath.Join(dir, "missing.go")
	leases := config.NewMatcher(config.Patterns{"example.com/lease/..."})
	for _, tc := range []struct {
		name    string
		matcher *config.Matcher
		paths   []string
		files   []string
		want    bool
	}{
		{"named by setting", leases, []string{"example.com/lease/pg"}, []string{plain}, true},
		{"its external test package named", config.NewMatcher(config.Patterns{"example.com/app_test"}), []string{"example.com/app", "example.com/app_test"}, []string{plain}, true},
		{"a file with a directive", nil, []string{"example.com/app"}, []string{plain, marked}, true},
		{"a file that cannot be read", nil, []string{"example.com/app"}, []string{missing}, true},
		{"neither", leases, []string{"example.com/app"}, []string{plain}, false},
		{"no setting, no directive", nil, []string{"example.com/lease/pg"}, []string{plain}, false},
	} {
		if got := Candidate(tc.matcher, tc.paths, tc.files); got != tc.want {
			t.Errorf("%s: Candidate = %v, want %v", tc.name, got, tc.want)
		}
	}
}
