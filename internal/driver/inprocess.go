package driver

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/leaseguard/leaseguard/analyzer/config"
	"github.com/leaseguard/leaseguard/internal/depcheck"
)

// Run directly with a flag that go vet does not have (-test, -fix, -diff,
// -c, -v, -debug, -tags, the profiles; see commandFlags), leaseguard
// analyses the packages in its own process, as the golangci-lint plugin
// does (internal/depcheck): the packages that can have a finding (see
// listRoots) and, unless -test=false, their test variants, in one graph
// with their imports, in dependency order, each package type-checked
// from source against its imports' export data and only its facts kept
// once it is done. The findings are read into the type that go vet's are
// read into (see finding) and written by the same writers; the text
// comes rule by rule, in x/tools' checkers' order, as it did when
// x/tools' multichecker served these flags.

// runInProcess analyses roots in process and writes the findings as p
// asks: -fix applies their fixes (with -diff, prints them), -json prints
// them as go vet -json does, and otherwise a line each on stderr, with
// -c's context. cfg holds the rules' settings, set by parse: as with go
// vet, notes are on unless -lease.notes was given, and neither notes nor
// explanations count as findings. It returns the exit code: 0 no findings
// (or -json, or -fix done), 3 findings, 1 a tool error, 2 a setting that
// aims at nothing.
func runInProcess(p *plan, cfg *config.Config, roots []string, stdout, stderr io.Writer) int {
	if !slices.ContainsFunc(p.vetFlags, isFlag("lease.notes")) {
		cfg.Lease.Notes = true
	}
	fs, tree, ok := analyseInProcess(p, roots, stderr)
	switch {
	case !ok:
		return 1
	case badSettings(fs, stderr):
		return 2
	case p.fix:
		return fix(p, fs, stdout, stderr)
	case p.format == "json":
		return writeTree(stdout, stderr, tree)
	}
	if writeText(stderr, fs, p.context) > 0 {
		return 3
	}
	return 0
}

// analyseInProcess analyses roots (see depcheck.Analyze) as p says, and
// returns the findings of p's rules (see rootFindings). ok is false when
// the analysis failed; it has said why on stderr. With -v it says what it
// analyses and how long it took, with -debug=t which packages took most
// of it.
func analyseInProcess(p *plan, roots []string, stderr io.Writer) (fs []finding, tree map[string]map[string][]finding, ok bool) {
	cfg := &depcheck.Config{Tests: p.tests, BuildFlags: p.buildFlags}
	if p.sequential {
		cfg.Workers = 1
	}
	var times []packageTime
	cfg.Done = func(id string, took time.Duration) { times = append(times, packageTime{id, took}) }
	if p.verbose {
		with := "their"
		if len(roots) == 1 {
			with = "its"
		}
		if p.tests {
			with += " test variants and"
		}
		fmt.Fprintf(stderr, "leaseguard: analysing %s, with %s imports\n", strings.Join(roots, " "), with)
	}
	start := time.Now()
	results, err := depcheck.Analyze(cfg, roots, p.rules)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return nil, nil, false
	}
	if p.verbose {
		fmt.Fprintf(stderr, "leaseguard: analysed %s in %.2fs\n", plural(len(times), "package", "packages"), time.Since(start).Seconds())
	}
	if p.timing {
		writeTimes(stderr, times)
	}
	fs, tree, err = rootFindings(results, p.rules)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: %v\n", err)
		return nil, nil, false
	}
	return fs, tree, true
}

// fix applies the first suggested fix of each of fs (see fixFiles), or
// with -diff writes their diff to stdout, and returns the exit code: 0,
// or 1 if the fixes conflict or a file could not be read or written.
func fix(p *plan, fs []finding, stdout, stderr io.Writer) int {
	files, applied, skipped, err := fixFiles(fs)
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: -fix: %v; no file was changed\n", err)
		return 1
	}
	if p.diff {
		err = writeDiff(stdout, files)
	} else {
		err = writeFixes(files)
	}
	if err != nil {
		fmt.Fprintf(stderr, "leaseguard: -fix: %v\n", err)
		return 1
	}
	if p.verbose {
		if skipped > 0 {
			fmt.Fprintf(stderr, "leaseguard: skipped %s that would edit generated files\n", plural(skipped, "fix", "fixes"))
		}
		done := "updated"
		if p.diff {
			done = "would update"
		}
		fmt.Fprintf(stderr, "leaseguard: applied %s, %s %s\n", plural(applied, "fix", "fixes"), done, plural(len(files), "file", "files"))
	}
	return 0
}

// A packageTime is how long one package's analysis took.
type packageTime struct {
	id   string
	took time.Duration
}

// writeTimes writes the packages whose analysis took longest, a line
// each (the time, a tab, the package), until they add up to nine tenths
// of the whole, then what the others took together, as x/tools' checkers'
// -debug=t does.
func writeTimes(w io.Writer, times []packageTime) {
	slices.SortStableFunc(times, func(a, b packageTime) int { return cmp.Compare(b.took, a.took) })
	var total, sum time.Duration
	for _, t := range times {
		total += t.took
	}
	for _, t := range times {
		fmt.Fprintf(w, "%s\t%s\n", t.took, t.id)
		if sum += t.took; sum >= total*9/10 {
			break
		}
	}
	if total > sum {
		fmt.Fprintf(w, "%s\tall others\n", total-sum)
	}
}

// startProfiles starts a CPU profile and an execution trace if ps names
// files for them, and returns a function that stops them and writes a
// memory profile if ps names a file for it (its file is created at
// once, so that a bad name fails before the run).
func startProfiles(ps profiles) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for _, s := range slices.Backward(stops) {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	fail := func(flag string, err error) (func() error, error) {
		_ = stop()
		return nil, fmt.Errorf("-%s: %w", flag, err)
	}
	if ps.cpu != "" {
		f, err := os.Create(ps.cpu)
		if err != nil {
			return fail("cpuprofile", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fail("cpuprofile", err)
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if ps.trace != "" {
		f, err := os.Create(ps.trace)
		if err != nil {
			return fail("trace", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return fail("trace", err)
		}
		stops = append(stops, func() error { trace.Stop(); return f.Close() })
	}
	if ps.mem != "" {
		f, err := os.Create(ps.mem)
		if err != nil {
			return fail("memprofile", err)
		}
		stops = append(stops, func() error {
			runtime.GC() // the heap as it is, not as of the last collection
			if err := pprof.WriteHeapProfile(f); err != nil {
				f.Close()
				return fmt.Errorf("-memprofile: %w", err)
			}
			return f.Close()
		})
	}
	return stop, nil
}
