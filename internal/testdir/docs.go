package testdir

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// RepoURL is the prefix of a link to a file of this repository's main
// branch, as analyzers' URLs and SARIF help URIs give them.
const RepoURL = "https://github.com/leaseguard/leaseguard/blob/main/"

// Repo returns the absolute path of the repository's root.
func Repo() string { return filepath.Dir(Root()) }

// CheckURL reports whether url, a link under RepoURL with an optional
// #fragment, names a file of the repository and, for a Markdown file, a
// heading of it.
func CheckURL(url string) error {
	rel, ok := strings.CutPrefix(url, RepoURL)
	if !ok {
		return fmt.Errorf("%s: not a link into %s", url, RepoURL)
	}
	return CheckLink(Repo(), rel)
}

// CheckLink reports whether link, relative to the directory dir
// ("docs/rules/fence.md", "../README.md#running-it", "#install" for dir's
// own file when dir is a file), names a file and, for a Markdown file, a
// heading of it by its GitHub anchor.
func CheckLink(dir, link string) error {
	path, anchor, _ := strings.Cut(link, "#")
	var file string
	if path == "" {
		file = dir
	} else {
		base := dir
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			base = filepath.Dir(dir)
		}
		file = filepath.Join(base, filepath.FromSlash(path))
	}
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("%s: %w", link, err)
	}
	if anchor == "" {
		return nil
	}
	if !strings.HasSuffix(file, ".md") {
		return fmt.Errorf("%s: an anchor in a file that is not Markdown", link)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for _, h := range Headings(string(src)) {
		if Anchor(h) == anchor {
			return nil
		}
	}
	return fmt.Errorf("%s: %s has no heading with anchor #%s", link, filepath.Base(file), anchor)
}

// prose yields the lines of the Markdown text src outside fenced code
// blocks, without their line endings.
func prose(src string) iter.Seq[string] {
	return func(yield func(string) bool) {
		fenced := false
		for line := range strings.Lines(src) {
			line = strings.TrimRight(line, "\n")
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
				continue
			}
			if !fenced && !yield(line) {
				return
			}
		}
	}
}

// Headings returns the text of the Markdown headings of src, outside
// fenced code blocks.
func Headings(src string) []string {
	var hs []string
	for line := range prose(src) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		if h := strings.TrimLeft(line, "#"); strings.HasPrefix(h, " ") {
			hs = append(hs, strings.TrimSpace(h))
		}
	}
	return hs
}

var notInAnchor = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)

// Anchor returns the fragment that GitHub gives a heading: lower case,
// punctuation other than - and _ dropped, spaces as hyphens.
func Anchor(heading string) string {
	a := notInAnchor.ReplaceAllString(strings.ToLower(heading), "")
	return strings.ReplaceAll(a, " ", "-")
}

// Links returns the targets of the inline Markdown links of src that point
// into the repository (not http, https or mailto), outside code.
func Links(src string) []string {
	var links []string
	for line := range prose(src) {
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, target)
		}
	}
	return links
}

var inlineLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)
