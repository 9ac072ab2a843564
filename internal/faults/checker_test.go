package faults_test

import (
	"fmt"
	"testing"

	"github.com/leaseguard/leaseguard/internal/faults"
)

// TestParseLine reads the worker's lines: the four outcomes, and no other
// event.
func TestParseLine(t *testing.T) {
	for _, k := range []faults.Kind{faults.Acked, faults.Rejected, faults.Unknown, faults.Failed} {
		line := fmt.Sprintf("%s w1-7 3", k)
		if k == faults.Failed {
			line += " connection refused"
		}
		want := faults.Outcome{Key: "w1-7", Holder: "w1", Epoch: 3, Kind: k}
		if got, ok := faults.ParseLine("w1", line); !ok || got != want {
			t.Errorf("ParseLine(%q) = %+v, %v; want %+v, true", line, got, ok, want)
		}
	}
	for _, line := range []string{"acq 3", "intx w1-7 3", "lost 0 lease lost", "ack w1-7", "ack w1-7 x", ""} {
		if got, ok := faults.ParseLine("w1", line); ok {
			t.Errorf("ParseLine(%q) = %+v, true; want no outcome", line, got)
		}
	}
}
