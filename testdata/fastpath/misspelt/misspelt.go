//lease-guard:lease

// Package misspelt has the lease directive spelt wrong: no lease package,
// and no comment that starts with leaseguard either, but the near miss is
// reported.
package misspelt
