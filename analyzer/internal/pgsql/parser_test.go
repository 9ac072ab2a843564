package pgsql

import (
	"sync"
	"testing"
)

// TestParallel parses from many goroutines at once, as the standalone
// driver's checker runs packages (the WebAssembly parser gives each an
// instance of its own).
func TestParallel(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				p := Parse("UPDATE worker_leases SET expires_at = clock_timestamp() + $1 WHERE name = @name AND epoch = $2")
				if p.Err != nil || len(p.Stmts) != 1 {
					t.Errorf("goroutine %d: %v, %d statements", i, p.Err, len(p.Stmts))
					return
				}
				if p := Parse("SELEC 1"); p.Err == nil || p.ErrorOffset() != 0 {
					t.Errorf("goroutine %d: a syntax error: %v at %d", i, p.Err, p.ErrorOffset())
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkParse parses a renewal, as the rules do once per SQL text, with
// whichever parser is built in (CGO_ENABLED=0 for the WebAssembly one); the
// first parse of the process is before the timer.
func BenchmarkParse(b *testing.B) {
	const sql = "UPDATE worker_leases SET expires_at = clock_timestamp() + $1 WHERE name = $2 AND holder = $3 AND epoch = $4 AND expires_at > clock_timestamp() RETURNING epoch"
	Parse(sql)
	for b.Loop() {
		if p := Parse(sql); p.Err != nil {
			b.Fatal(p.Err)
		}
	}
}
