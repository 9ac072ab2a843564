//leaseguard:lease

// Package store writes orders to a table whose name its configuration
// holds, so that only a setting that names the Go field (-fence.tables=
// example.com/aim/store.Store.orders) makes the table one that needs a
// fence: the insert below is not fenced. A setting that names a field that
// does not exist must fail, not check nothing.
package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Store writes orders.
type Store struct {
	db     *sql.DB
	orders string // the orders table's name
}

// Append writes an order with no fence.
func (s *Store) Append(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id) VALUES ($1)", s.orders), id)
	return err
}
