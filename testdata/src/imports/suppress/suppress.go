// want package:"reaches github.com/openai/openai-go/v3 via imports/suppress -> example.com/explain; net/http via imports/suppress -> example.com/notify -> example.com/webhook; net/http via"
//leaseguard:lease

// Package suppress has suppressions that are used and one that is not.
package suppress

import (
	//leaseguard:allow imports -- the explainer runs only after a failed write, off the lease path
	"example.com/explain"
	"example.com/notify" //leaseguard:allow imports -- paging is fire-and-forget
	"example.com/outer"  // want `lease package imports model SDK`
)

/* want `unused //leaseguard:allow imports: nothing here is reported by imports; remove it` */ //leaseguard:allow imports -- nothing here to suppress
var (
	_ = explain.Why
	_ = notify.Tell
	_ = outer.Report
)
