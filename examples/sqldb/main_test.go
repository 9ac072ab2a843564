package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRun runs the example on the test database: the fenced transfers of
// both leaders commit, and the late one under the taken-over lease is
// refused with nothing changed.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), pgtest.DB(t), &out); err != nil {
		t.Fatal(errors.Join(err, errors.New(out.String())))
	}
	t.Log("\n" + out.String())
	for _, want := range []string{
		"worker-a leads at epoch 1\n",
		"worker-a: 3 fenced transfers committed\n",
		"worker-b leads at epoch 2\n",
		"worker-a transfers under epoch 1: fence under ",
		"stale fence; drop the write\n",
		"worker-b: 1 fenced transfer committed\n",
		"balances: 60 and 40\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
