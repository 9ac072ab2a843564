// leaseguard:lease

// Package mention has a near miss of the lease directive: no lease
// package, but the near miss is reported.
package mention
