// Package testdir locates the repository's top-level testdata directory,
// which holds the analyzers' fixtures and the end-to-end fixture modules.
package testdir

import (
	"path/filepath"
	"runtime"
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
