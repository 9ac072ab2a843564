package imports

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestBanListDocumented checks that the curated ban list table of
// docs/rules/imports.md lists every entry of the curated list and nothing
// else, each in a row that names its kind and says whether it counts only
// on client use.
func TestBanListDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testdir.Repo(), "docs", "rules", "imports.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, found := strings.Cut(string(doc), "| prefix | what | why it is banned |")
	if !found {
		t.Fatal("docs/rules/imports.md has no ban list table")
	}
	code := regexp.MustCompile("`([^`]+)`")
	documented := map[string]bool{}
	for line := range strings.Lines(strings.TrimPrefix(table, "\n")) {
		if !strings.HasPrefix(line, "|") {
			break // the end of the table
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			continue
		}
		what, why := strings.TrimSpace(cells[1]), cells[2]
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			prefix := m[1]
			documented[prefix] = true
			i := slices.IndexFunc(curated, func(b ban) bool { return b.prefix == prefix })
			if i < 0 {
				t.Errorf("the table lists %s, which the curated list does not have", prefix)
				continue
			}
			b := curated[i]
			if !strings.HasPrefix(what, string(b.kind)) {
				t.Errorf("%s: the table says %q, the list %q", prefix, what, b.kind)
			}
			if onUse := strings.Contains(why, "only on client use"); onUse != b.onUse {
				t.Errorf("%s: the table says counted only on client use: %v, the list %v", prefix, onUse, b.onUse)
			}
		}
	}
	for _, b := range curated {
		if !documented[b.prefix] {
			t.Errorf("the curated list has %s, which the table does not list", b.prefix)
		}
	}
}
