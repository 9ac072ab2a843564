package lease

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A directive is what one comment says to leaseguard.
type directive struct {
	// verb is "lease", "allow" or "sql" for a comment that is, or was
	// meant to be, that directive; "" for an unknown verb or no directive.
	verb string
	// args follow the verb of a well-formed //leaseguard:allow.
	args string
	// problem says what is wrong with a comment that looks like a
	// directive and is not one: a near miss. "" for a well-formed
	// directive and for a comment that is no directive at all.
	problem string
}

// parseDirective reads one comment's text (with its // or /* */).
//
// Only //leaseguard:lease, alone on its line (trailing white space
// aside), and //leaseguard:allow ARGS are directives. Near misses are
// comments that leaseguard would otherwise pass over in silence: another
// verb after //leaseguard:, text after //leaseguard:lease, and lease or allow
// written in another form (a space after // or around the colon, a block
// comment, upper case). A comment that merely mentions leaseguard in prose
// ("// leaseguard: lease packages are ...") is none: with spaces around the
// colon, the verb must end the comment.
func parseDirective(text string) directive {
	if rest, ok := strings.CutPrefix(text, directivePrefix); ok {
		verb, args := cutSpace(rest)
		switch verb {
		case "lease":
			if args = strings.TrimSpace(args); args != "" {
				return directive{verb: "lease", problem: fmt.Sprintf("//leaseguard:lease takes nothing after it, found %s", quote(args))}
			}
			return directive{verb: "lease"}
		case "allow":
			return directive{verb: "allow", args: args}
		case "sql":
			// Marks an interface that executes SQL; the clock rule reads it
			// and reports a malformed one.
			return directive{verb: "sql"}
		case "":
			// //leaseguard: lease
			if w, _ := cutSpace(strings.TrimLeftFunc(args, unicode.IsSpace)); nearVerb(w) != "" {
				v := nearVerb(w)
				return directive{verb: v, problem: fmt.Sprintf("malformed directive %s: write %s", quote(text), canonical(v))}
			}
		}
		d := directive{problem: fmt.Sprintf("unknown directive %s: want //leaseguard:lease, //leaseguard:allow or //leaseguard:sql", quote(directivePrefix+verb))}
		if v := nearVerb(verb); v != "" {
			d.verb = v
		}
		return d
	}
	// Another form of the directive?
	body, ok := strings.CutPrefix(text, "//")
	if !ok {
		body = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
	}
	body = strings.TrimSpace(body)
	const name = "leaseguard"
	if len(body) < len(name) || !strings.EqualFold(body[:len(name)], name) {
		return directive{}
	}
	rest := body[len(name):]
	spaced := strings.TrimLeftFunc(rest, unicode.IsSpace)
	after, ok := strings.CutPrefix(spaced, ":")
	if !ok {
		return directive{}
	}
	spaced2 := strings.TrimLeftFunc(after, unicode.IsSpace)
	word, tail := cutSpace(spaced2)
	v := nearVerb(word)
	tight := len(spaced) == len(rest) && len(spaced2) == len(after)
	if v == "" || (!tight && strings.TrimSpace(tail) != "") {
		return directive{}
	}
	return directive{verb: v, problem: fmt.Sprintf("malformed directive %s: write %s", quote(text), canonical(v))}
}

// canonical is the well-formed directive for verb.
func canonical(verb string) string {
	if verb == "allow" {
		return "//leaseguard:allow RULE -- reason"
	}
	return "//leaseguard:lease"
}

// cutSpace cuts s at its first white space.
func cutSpace(s string) (before, after string) {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// quote quotes what the user wrote for a message, shortened if long.
func quote(s string) string {
	const limit = 60
	if len(s) > limit {
		cut := limit
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// nearVerb returns the verb, lease or allow, that w spells or misspells
// (in any case, with at most one letter added, dropped, changed or two
// swapped), or "".
func nearVerb(w string) string {
	if len(w) < 3 || len(w) > 7 {
		return ""
	}
	w = strings.ToLower(w)
	for _, v := range []string{"lease", "allow"} {
		if withinOneEdit(w, v) {
			return v
		}
	}
	return ""
}

// withinOneEdit reports whether a and b differ by at most one insertion,
// deletion, substitution or transposition of adjacent bytes.
func withinOneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return true
	}
	if len(a) == len(b) {
		// substitution, or transposition
		return a[i+1:] == b[i+1:] ||
			(i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:])
	}
	return a[i:] == b[i+1:] // insertion into a
}

// Mentioned reports whether src, a Go file's text, has a comment that
// starts with "leaseguard", in any case and spacing: a file without one
// holds no directive and no near miss of one, so a package none of whose
// files has one can have a finding only as a lease package named by
// setting. Drivers read it to skip packages before loading them. It may
// find such a comment inside a string literal, which only costs a package
// loaded for nothing; an import of a leaseguard package is no comment.
func Mentioned(src []byte) bool {
	const word = "leaseguard"
	lower := bytes.ToLower(src)
	for off := 0; ; {
		i := bytes.Index(lower[off:], []byte(word))
		if i < 0 {
			return false
		}
		i += off
		j := i
		for j > 0 && (lower[j-1] == ' ' || lower[j-1] == '\t' || lower[j-1] >= utf8.RuneSelf) {
			j-- // white space, in ASCII or not
		}
		if j >= 2 && lower[j-2] == '/' && (lower[j-1] == '/' || lower[j-1] == '*') {
			return true
		}
		off = i + len(word)
	}
}
