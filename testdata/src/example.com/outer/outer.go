// Package outer reaches the model SDK through explain.
package outer

import "example.com/explain"

// Report explains err.
func Report(err error) string { return explain.Why(err) }
