package lease

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/leaseguard/leaseguard/analyzer/config"
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
// comment, upper case), and comments one edit from a directive (see
// misspelt). A comment that merely mentions leaseguard in prose
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
	v := otherForm(body)
	if v == "" {
		v = misspelt(body)
	}
	if v == "" {
		return directive{}
	}
	return directive{verb: v, problem: fmt.Sprintf("malformed directive %s: write %s", quote(text), canonical(v))}
}

// otherForm returns the verb, lease or allow, of body, a comment's text
// without its markers, when it starts with leaseguard in any case, then a
// colon and the verb or a misspelling of it (see nearVerb), with white
// space around the colon only when the verb ends the comment; else "".
func otherForm(body string) string {
	const name = "leaseguard"
	if len(body) < len(name) || !strings.EqualFold(body[:len(name)], name) {
		return ""
	}
	rest := body[len(name):]
	spaced := strings.TrimLeftFunc(rest, unicode.IsSpace)
	after, ok := strings.CutPrefix(spaced, ":")
	if !ok {
		return ""
	}
	spaced2 := strings.TrimLeftFunc(after, unicode.IsSpace)
	word, tail := cutSpace(spaced2)
	v := nearVerb(word)
	tight := len(spaced) == len(rest) && len(spaced2) == len(after)
	if v == "" || (!tight && strings.TrimSpace(tail) != "") {
		return ""
	}
	return v
}

// misspelt returns the verb, lease, allow or sql, of body, a comment's
// text without its markers, when its first word is one edit (a character
// added, dropped, changed, or two swapped), in any case, from
// leaseguard:VERB: //lease-guard:lease, //leasegaurd:lease,
// //leaseguard：lease with a full-width colon, //leaseguardlease. The
// first two words count as one when they end the comment, so that a space
// is an edit too (//lease guard:lease, //leaseguard lease). Prose that
// mentions leaseguard is not one edit from a directive: the colon and the
// verb must follow without a space (// lease guard: see below, //
// leaseguard: lease packages are…), and a word that only shares the verb
// (//release:lease) is more than one edit away. Else "".
func misspelt(body string) string {
	lower := strings.ToLower(body)
	first, rest := cutSpace(lower)
	second, tail := cutSpace(strings.TrimLeftFunc(rest, unicode.IsSpace))
	words := []string{first}
	if second != "" && strings.TrimSpace(tail) == "" {
		words = append(words, lower) // both words, and the white space between them
	}
	for _, w := range words {
		if utf8.RuneCountInString(w) > len("leaseguard:allow")+1 {
			continue
		}
		for _, v := range []string{"lease", "allow", "sql"} {
			if withinOneEdit(w, "leaseguard:"+v) {
				return v
			}
		}
	}
	return ""
}

// canonical is the well-formed directive for verb.
func canonical(verb string) string {
	switch verb {
	case "allow":
		return "//leaseguard:allow RULE -- reason"
	case "sql":
		return "//leaseguard:sql"
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
// deletion, substitution or transposition of adjacent characters.
func withinOneEdit(a, b string) bool {
	return oneEdit([]rune(a), []rune(b))
}

func oneEdit(a, b []rune) bool {
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
		return slices.Equal(a[i+1:], b[i+1:]) ||
			(i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && slices.Equal(a[i+2:], b[i+2:]))
	}
	return slices.Equal(a[i:], b[i+1:]) // insertion into a
}

// Candidate reports whether a package could have a finding, decided
// before anything is loaded, as every driver decides it: one of its import
// paths (a package's, and its external test package's) is a lease package
// by setting (packages, compiled from -lease.packages), or one of its
// files has a comment that starts with leaseguard or a word one edit from
// it (Mentioned). A file that cannot be read counts, so that the load says
// why.
func Candidate(packages *config.Matcher, paths, files []string) bool {
	if slices.ContainsFunc(paths, packages.Match) {
		return true
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil || Mentioned(src) {
			return true
		}
	}
	return false
}

// Mentioned reports whether src, a Go file's text, has a comment that
// starts with "leaseguard", in any case and spacing, or with a word one
// edit from it (lease-guard, leasegaurd, lease guard): a file without one
// holds no directive and no near miss of one, so a package none of whose
// files has one can have a finding only as a lease package named by
// setting. Drivers read it to skip packages before loading them. It may
// find such a comment inside a string literal, which only costs a package
// loaded for nothing; an import of a leaseguard package is no comment.
func Mentioned(src []byte) bool {
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '/')
		if i < 0 {
			return false
		}
		i += off
		off = i + 1
		if i+1 == len(src) || src[i+1] != '/' && src[i+1] != '*' {
			continue
		}
		j := i + 2
		for j < len(src) && (isSpace(src[j]) || src[j] >= utf8.RuneSelf) {
			j++ // white space, in ASCII or not
		}
		if nearName(src[j:min(j+48, len(src))]) {
			return true
		}
	}
}

// nearName reports whether b, the start of a comment's text, starts with
// leaseguard or one edit from it, in any case (see misspelt).
func nearName(b []byte) bool {
	const name = "leaseguard"
	// One edit leaves "leas" at the start, or "uard" a little later.
	head := bytes.ToLower(b[:min(16, len(b))])
	if !bytes.HasPrefix(head, []byte("leas")) && !bytes.Contains(head, []byte("uard")) {
		return false
	}
	r := []rune(string(bytes.ToLower(b)))
	for n := len(name) - 1; n <= len(name)+1 && n <= len(r); n++ {
		if oneEdit(r[:n], []rune(name)) {
			return true
		}
	}
	return false
}

// isSpace reports whether c is white space in ASCII.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
