//leaseguard:lease

// Package candidates sends one of two statements from a variable: a
// finding that both share points at each of them.
package candidates

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

const insertOrder = `INSERT INTO orders (id, epoch) VALUES ($1, $2)`

const insertNote = `INSERT INTO orders (id, epoch, note) VALUES ($1, $2, 'retried')`

// Write sends one of the two, unfenced.
func Write(ctx context.Context, id string, epoch int64, retried bool) error {
	q := insertOrder
	if retried {
		q = insertNote
	}
	_, err := pool.Exec(ctx, q, id, epoch) // want `INSERT into orders is not fenced`
	return err
}
