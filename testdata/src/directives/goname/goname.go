// want package:"lease package"
//leaseguard:lease

// Package goname is a lease package whose table names are held in Go
// fields and variables, as -fence.table and -fence.tables may name them.
// The test names some that do not exist: each is reported at the package
// clause, since it would make the fence rule check nothing.
package goname // want `^-fence.table "directives/goname.Store.tabel": directives/goname.Store has no field tabel; want pkg/path.Type.Field or pkg/path.Var` `^-fence.tables "directives/goname.orderTable": directives/goname has no package variable orderTable; want`

// Store holds its lease table's name.
type Store struct {
	table string
}

// ordersTable is the name of the table of orders.
var ordersTable = "orders"
