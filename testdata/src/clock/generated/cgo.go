package generated

// #include <stdlib.h>
import "C"

import (
	"context"
	"time"
)

// seed calls C, so the go command hands the analyzers cgo's translation
// of this file, which carries cgo's generated-code header.
func seed() int { return int(C.rand()) }

func stampWithCgo(ctx context.Context, q *Queries) {
	q.db.Exec(ctx, touchLease, "a", time.Now().Add(time.Duration(seed()))) // want `time.Now flows into an argument of Exec`
}
