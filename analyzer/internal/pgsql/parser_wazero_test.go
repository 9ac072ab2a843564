//go:build !cgo

package pgsql

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// firstParse is what a process pays on its first parse: the engine made
// (the module compiled, or loaded from the cache in dir), an instance, one
// statement parsed; then the runtime is closed, as the process would end.
func firstParse(tb testing.TB, dir string) {
	e := newEngine(dir)
	defer e.rt.Close(context.Background())
	if _, err := e.call("SELECT 1", func(in *instance) (api.Function, api.Function) { return in.parse, in.freeParse }); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkFirstParse measures the first parse of a process: with no
// compilation cache on disk (the module compiled, as on a machine's first
// run), and with the cache written (loaded from it, as on every later run).
// Under go vet every lease package is a process and pays it once.
func BenchmarkFirstParse(b *testing.B) {
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			firstParse(b, "")
		}
	})
	b.Run("from the cache", func(b *testing.B) {
		dir := b.TempDir()
		firstParse(b, dir) // writes the cache
		for b.Loop() {
			firstParse(b, dir)
		}
	})
}
