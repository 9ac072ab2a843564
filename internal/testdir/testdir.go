// Package testdir holds what tests need of the repository itself: where its
// top-level testdata directory is (the analyzers' fixtures and the
// end-to-end fixture modules), checks that keep its docs' links true,
// Track, for the tests that build and run its commands, and Unavailable,
// the rule that a test skips for want of a server or a tag, but not in CI.
package testdir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root returns the absolute path of the top-level testdata directory, the
// GOPATH-style root (with src/ below it) that analysistest.Run takes.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testdir: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Track reads the metadata of every file of the repository but .git's.
// go test caches a passing result keyed on the files the test process
// opened; a test that builds and runs the repository's commands reads its
// sources in other processes, which the cache does not see. After Track,
// a change to any file of the repository runs the test again. go test
// records what a test binary reads from its first test on, not in TestMain:
// call Track in a test.
func Track() error {
	return filepath.WalkDir(Repo(), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		_, err = os.Stat(path)
		return err
	})
}

// Unavailable stops tb for want of something the repository does not hold
// (a PostgreSQL server, a build tag): it skips tb with the reason, except
// when the CI environment variable is set, where a skip would hide a
// missing install step, and it fails tb instead.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s; CI is set, so this test must run", reason)
	}
	tb.Skip(reason)
}
