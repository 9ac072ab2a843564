//go:build e2e

package main_test

import (
	"strings"
	"testing"
)

// TestVetBadSettingFailsEveryRun runs go vet twice with each bad setting:
// go vet caches a unit's output, not a tool error, so a setting checked only
// once the analyzers run fails the first run and lets every later one pass,
// checking nothing. A bad setting must fail every run, before any analysis,
// naming the flag and the value.
func TestVetBadSettingFailsEveryRun(t *testing.T) {
	dir := example(t)
	for _, bad := range badSettings {
		arg := "-" + bad.flag + "=" + bad.value
		t.Run(arg, func(t *testing.T) {
			runs := []result{
				run(t, dir, "go", "vet", "-vettool="+binary, arg, "./..."),
				run(t, dir, "go", "vet", "-vettool="+binary, arg, "./..."),
			}
			for i, r := range runs {
				if r.code == 0 {
					t.Errorf("run %d of go vet %s: exit 0, want a failure\nstderr:\n%s", i+1, arg, r.stderr)
				}
			}
			for i, r := range runs {
				if !strings.Contains(r.stderr, "-"+bad.flag) || !strings.Contains(r.stderr, bad.value) {
					t.Errorf("run %d of go vet %s: stderr does not name the flag and the value:\n%s", i+1, arg, r.stderr)
				}
			}
		})
	}
}
