// Package e2e holds the slow end-to-end tests: a golangci-lint binary built
// with the leaseguard plugin. They build only with the e2e tag, which the
// full test command (scripts/test.sh) sets and the inner loop
// (go test ./...) does not.
package e2e
