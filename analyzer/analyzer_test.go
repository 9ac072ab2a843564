package analyzer_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/analysis"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/analyzer/config"
)

// maxTitle is the longest title, in characters, that a listing such as
// go vet help or SARIF's short description shows whole.
const maxTitle = 72

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := analysis.Validate(analyzer.New(config.Default())); err != nil {
		t.Fatal(err)
	}
}

// TestTitles checks that each analyzer's Doc opens with a title: one short
// line that starts lower case, then a blank line or the end.
func TestTitles(t *testing.T) {
	t.Parallel()
	for _, a := range analyzer.New(config.Default()) {
		title, rest, more := strings.Cut(a.Doc, "\n")
		if title == "" {
			t.Errorf("%s: Doc has no title", a.Name)
			continue
		}
		if n := utf8.RuneCountInString(title); n > maxTitle {
			t.Errorf("%s: title is %d characters, more than %d: %q", a.Name, n, maxTitle, title)
		}
		if r, _ := utf8.DecodeRuneInString(title); !unicode.IsLower(r) {
			t.Errorf("%s: title does not start lower case: %q", a.Name, title)
		}
		if more && !strings.HasPrefix(rest, "\n") {
			t.Errorf("%s: title is not followed by a blank line: %q", a.Name, title)
		}
	}
}
