// Package pgconn stands in for pgx's pgconn, with the shapes the rules use.
package pgconn

// CommandTag stands in for pgconn.CommandTag.
type CommandTag struct{ n int64 }

// RowsAffected returns the rows affected.
func (t CommandTag) RowsAffected() int64 { return t.n }

// String returns the tag's text.
func (t CommandTag) String() string { return "" }

// StatementDescription stands in for pgconn.StatementDescription.
type StatementDescription struct{ Name, SQL string }
