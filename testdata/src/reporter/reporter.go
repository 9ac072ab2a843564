//leaseguard:lease

// Package reporter is the fixture of the reporting shell's test: a probe
// reports at the opening parenthesis of each call of find, as go/ssa places
// a call, twice, with the call of sql as related information.
package reporter

type query struct{}

func (query) Where() query { return query{} }
func (query) Exec()        {}

func find(...any) int { return 0 }

func sql() {}

func calls(q query) {
	_ = find(1, 2) // want "found"
	q.Where().
		Where().Exec() // want "found"
	sql()
}
