// Package repo declares the application's queries as an interface; their
// implementation lives in a package that lease code does not import.
// Malformed directives stand with their expectation in a block comment
// before them, since a directive must end its line.
package repo

import (
	"context"
	"time"
)

// ClusterMembership is a row of the membership table.
type ClusterMembership struct {
	Name   string
	Holder string
	Expiry time.Time
}

// Querier runs the application's queries.
//
//leaseguard:sql
type Querier interface { // want Querier:"executes SQL"
	UpsertClusterMembership(ctx context.Context, row *ClusterMembership) error
	DeleteClusterMembership(ctx context.Context, name string) error
}

// Save passes its row to SQL through the interface.
func Save(ctx context.Context, q Querier, row *ClusterMembership) error { // want Save:"executes SQL with params \\[2\\]"
	return q.UpsertClusterMembership(ctx, row)
}

// Clock tells the time a store was built with, for tests.
type Clock interface{ Now() time.Time }

// Leases runs the lease queries, and embeds the clock its tests set: of
// its methods only those that may send SQL by their signature execute
// SQL, not Now.
//
//leaseguard:sql
type Leases interface { // want Leases:"executes SQL"
	Clock
	Name() string
	DBNow(ctx context.Context) (time.Time, error)
	Renew(ctx context.Context, name string, until time.Time) error
}

// Cache runs no SQL: no directive, no fact.
type Cache interface {
	Put(ctx context.Context, row *ClusterMembership) error
}

/* want `//leaseguard:sql on Row, which is no interface` */ //leaseguard:sql
type Row struct{ Name string }

/* want `//leaseguard:sql takes nothing after it` */ //leaseguard:sql please
type Loose interface {
	Run(ctx context.Context) error
}

/* want `misplaced //leaseguard:sql: it must be in the doc comment of an interface type` */ //leaseguard:sql
var x = 1

// The directive may stand on a type in a group.
type (
	// Pinger checks the database.
	//
	//leaseguard:sql
	Pinger interface { // want Pinger:"executes SQL"
		Ping(ctx context.Context) error
	}

	// Unmarked runs no SQL.
	Unmarked interface {
		Do(ctx context.Context) error
	}
)
