package main

// This file matches findings to labels and writes the table.

import (
	"fmt"
	"io"
)

// A result is one mode's run on one entry, scored.
type result struct {
	entry  *entry
	mode   string
	failed string // why the run produced no usable output, if it did not

	tp, fp, fn, dup map[string]int // per rule
	tests           map[string]int // findings in test files, per rule
	testFindings    []*finding     // not scored
	others          []*finding     // findings of other analyzers, not scored
	falsePos        []*finding
	missed          []*label
}

// score matches findings to labels one to one (a maximum matching, so
// that overlapping ranges do not cost a match), then counts.
func (r *result) score(findings []*finding) {
	r.tp, r.fp, r.fn, r.dup, r.tests = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	var scored []*finding
	for _, f := range findings {
		switch {
		case !isRule(f.rule):
			r.others = append(r.others, f)
		case f.test:
			r.tests[f.rule]++
			r.testFindings = append(r.testFindings, f)
		default:
			scored = append(scored, f)
		}
	}
	labelOf, findingOf := match(scored, r.entry.labels)
	for i, f := range scored {
		switch {
		case labelOf[i] >= 0:
			r.tp[f.rule]++
		case coversAny(r.entry.labels, f):
			r.dup[f.rule]++
		default:
			r.fp[f.rule]++
			r.falsePos = append(r.falsePos, f)
		}
	}
	for j, l := range r.entry.labels {
		if findingOf[j] < 0 {
			r.fn[l.rule]++
			r.missed = append(r.missed, l)
		}
	}
}

func coversAny(labels []*label, f *finding) bool {
	for _, l := range labels {
		if l.covers(f) {
			return true
		}
	}
	return false
}

// match pairs findings with labels that cover them, as many pairs as
// possible (Kuhn's augmenting paths; the sets are small). labelOf[i] is
// the label matched to finding i, findingOf[j] the finding matched to
// label j, -1 for none.
func match(findings []*finding, labels []*label) (labelOf, findingOf []int) {
	labelOf = make([]int, len(findings))
	findingOf = make([]int, len(labels))
	for i := range labelOf {
		labelOf[i] = -1
	}
	for j := range findingOf {
		findingOf[j] = -1
	}
	var try func(i int, visited []bool) bool
	try = func(i int, visited []bool) bool {
		for j, l := range labels {
			if visited[j] || !l.covers(findings[i]) {
				continue
			}
			visited[j] = true
			if findingOf[j] < 0 || try(findingOf[j], visited) {
				labelOf[i], findingOf[j] = j, i
				return true
			}
		}
		return false
	}
	for i := range findings {
		try(i, make([]bool, len(labels)))
	}
	return labelOf, findingOf
}

// ratio prints n/d with two decimals, or "-" when d is zero.
func ratio(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(d))
}

func report(w io.Writer, results []*result) {
	for _, r := range results {
		if r.failed != "" {
			fmt.Fprintf(w, "FAILED %s %s: %s\n", r.entry.name, r.mode, r.failed)
		}
	}
	row := func(entry, mode, rule string, tp, fp, fn, dup, tests int) {
		fmt.Fprintf(w, "%-18s %-10s %-7s %4d %4d %4d %4d %9s %6s %5d\n",
			entry, mode, rule, tp, fp, fn, dup, ratio(tp, tp+fp), ratio(tp, tp+fn), tests)
	}
	header := func() {
		fmt.Fprintf(w, "%-18s %-10s %-7s %4s %4s %4s %4s %9s %6s %5s\n",
			"entry", "mode", "rule", "TP", "FP", "FN", "dup", "precision", "recall", "tests")
	}
	header()
	for _, r := range results {
		for _, rule := range rules {
			row(r.entry.name, r.mode, rule, r.tp[rule], r.fp[rule], r.fn[rule], r.dup[rule], r.tests[rule])
		}
	}
	fmt.Fprintln(w)
	header()
	for _, mode := range modes {
		for _, rule := range rules {
			var tp, fp, fn, dup, tests int
			for _, r := range results {
				if r.mode == mode {
					tp, fp, fn, dup, tests = tp+r.tp[rule], fp+r.fp[rule], fn+r.fn[rule], dup+r.dup[rule], tests+r.tests[rule]
				}
			}
			row("total", mode, rule, tp, fp, fn, dup, tests)
		}
	}
	fmt.Fprintln(w, "\n(tests: findings in test files, not scored; dup: a further finding on a matched label)")

	fmt.Fprintln(w, "\nfalse positives:")
	for _, r := range results {
		for _, f := range r.falsePos {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
			for _, ok := range r.entry.oks {
				if ok.covers(f) {
					fmt.Fprintf(w, "      judged fine at %s: %s\n", ok, ok.why)
				}
			}
		}
	}
	fmt.Fprintln(w, "\nfalse negatives:")
	for _, r := range results {
		for _, l := range r.missed {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, l.rule, l, l.why)
		}
	}
	fmt.Fprintln(w, "\nfindings in test files (not scored):")
	for _, r := range results {
		for _, f := range r.testFindings {
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
		}
	}
	var others bool
	for _, r := range results {
		for _, f := range r.others {
			if !others {
				fmt.Fprintln(w, "\nother diagnostics (not scored):")
				others = true
			}
			fmt.Fprintf(w, "  %s %s %s %s: %s\n", r.mode, r.entry.name, f.rule, f, f.message)
		}
	}
}
