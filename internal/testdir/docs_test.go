package testdir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/testdir"
)

// TestDocLinks checks that every link from the repository's Markdown
// files into the repository names a file that exists and, with an anchor,
// a heading of it.
func TestDocLinks(t *testing.T) {
	repo := testdir.Repo()
	files := []string{"README.md", "CONTRIBUTING.md", "bench/field/README.md"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(path string, _ fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repo, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		path := filepath.Join(repo, f)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range testdir.Links(string(src)) {
			checked++
			if err := testdir.CheckLink(path, link); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links in %d files; the README alone has more", checked, len(files))
	}
}

func TestCheckLink(t *testing.T) {
	readme := filepath.Join(testdir.Repo(), "README.md")
	for _, link := range []string{"#running-it", "docs/rules/fence.md", "CONTRIBUTING.md#a-database-for-the-tests"} {
		if err := testdir.CheckLink(readme, link); err != nil {
			t.Errorf("CheckLink(README.md, %q): %v", link, err)
		}
	}
	for _, link := range []string{"#no-such-heading", "docs/rules/nosuch.md", "go.mod#module"} {
		if err := testdir.CheckLink(readme, link); err == nil {
			t.Errorf("CheckLink(README.md, %q) = nil, want an error", link)
		}
	}
	if err := testdir.CheckURL("https://example.com/README.md"); err == nil {
		t.Error("CheckURL accepted a link outside the repository")
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Lease packages and directives":                 "lease-packages-and-directives",
		"Why the row lock, and why `clock_timestamp()`": "why-the-row-lock-and-why-clock_timestamp",
		"The `fence` rule":                              "the-fence-rule",
		"pre-commit and lefthook":                       "pre-commit-and-lefthook",
	} {
		if got := testdir.Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestRulePageSettings checks that each rule's page lists, in its settings
// table, exactly the settings the rule has: a row per flag (or one row for
// several, `-fence.holder-column`, `-fence.epoch-column`, …).
func TestRulePageSettings(t *testing.T) {
	row := regexp.MustCompile("`-([a-z]+)\\.([a-z-]+)")
	for _, rule := range []string{"imports", "clock", "fence"} {
		page, err := os.ReadFile(filepath.Join(testdir.Repo(), "docs", "rules", rule+".md"))
		if err != nil {
			t.Fatal(err)
		}
		documented := make(map[string]bool)
		for line := range strings.Lines(string(page)) {
			if !strings.HasPrefix(line, "| `-") {
				continue
			}
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			for _, m := range row.FindAllStringSubmatch(first, -1) {
				if m[1] != rule {
					t.Errorf("docs/rules/%s.md: a row for -%s.%s, another rule's setting", rule, m[1], m[2])
				}
				documented[m[2]] = true
			}
		}
		for _, s := range config.Settings() {
			if s.Rule != rule {
				continue
			}
			if !documented[s.Key] {
				t.Errorf("docs/rules/%s.md: no row for -%s.%s", rule, rule, s.Key)
			}
			delete(documented, s.Key)
		}
		for key := range documented {
			t.Errorf("docs/rules/%s.md: a row for -%s.%s, which the rule does not have", rule, rule, key)
		}
	}
}

// TestRulePageOutline checks that each rule's page follows the one outline
// (what it reports, what it does not, settings, examples, suppressing),
// in that order, before any section of its own.
func TestRulePageOutline(t *testing.T) {
	outline := []string{"What it reports", "What it does not report", "Settings", "Examples", "Suppressing"}
	for _, rule := range []string{"imports", "clock", "fence"} {
		page, err := os.ReadFile(filepath.Join(testdir.Repo(), "docs", "rules", rule+".md"))
		if err != nil {
			t.Fatal(err)
		}
		var headings []string
		for line := range strings.Lines(string(page)) {
			if h, ok := strings.CutPrefix(line, "## "); ok {
				headings = append(headings, strings.TrimSpace(h))
			}
		}
		if len(headings) < len(outline) || !slices.Equal(headings[:len(outline)], outline) {
			t.Errorf("docs/rules/%s.md: sections %q, want %q first", rule, headings, outline)
		}
	}
}
