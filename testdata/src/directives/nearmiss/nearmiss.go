/* want `malformed directive "// leaseguard:lease": write //leaseguard:lease, or the package is not checked` */ // leaseguard:lease
/* want `unknown directive "//leaseguard:leas": want //leaseguard:lease, //leaseguard:allow or //leaseguard:sql, or the package is not checked` */ //leaseguard:leas
/* want `malformed directive "//leaseguard: lease": write //leaseguard:lease, or the package is not checked` */ //leaseguard: lease
/* want `malformed directive "/.leaseguard:lease./": write //leaseguard:lease, or the package is not checked` */ /*leaseguard:lease*/
/* want `//leaseguard:lease takes nothing after it, found "// note", or the package is not checked` */ //leaseguard:lease // note
/* want `malformed directive "//LeaseGuard:Lease": write //leaseguard:lease, or` */ //LeaseGuard:Lease
/* want `malformed directive "/. leaseguard : lease ./": write //leaseguard:lease, or` */ /* leaseguard : lease */
/* want `unknown directive "//leaseguard:": want` */ //leaseguard:
/* want `malformed directive "//lease-guard:lease": write //leaseguard:lease, or the package is not checked` */ //lease-guard:lease
/* want `malformed directive "//lease_guard:lease": write //leaseguard:lease, or` */ //lease_guard:lease
/* want `malformed directive "//leasegaurd:lease": write //leaseguard:lease, or` */ //leasegaurd:lease
/* want `malformed directive "//leaseguard：lease": write //leaseguard:lease, or` */ //leaseguard：lease
/* want `malformed directive "//lease guard:lease": write //leaseguard:lease, or` */ //lease guard:lease
/* want `malformed directive "//leaseguardlease": write //leaseguard:lease, or` */ //leaseguardlease
/* want `malformed directive "// Lease-Guard:lease": write //leaseguard:lease, or` */ // Lease-Guard:lease

// Prose that mentions a lease guard, and words more than one edit from a
// directive, are no near misses:
// lease guard: see below
// leaseguard lease packages are named by setting
//release:lease
//lease-guard: lease
//lease--guard:lease

// leaseguard: lease packages carry the directive; prose that mentions it is fine.
// leaseguard:allow in a package that is not checked suppresses nothing, and is not reported.

// Package nearmiss has near misses of the lease directive before its
// package clause, where each would leave the package unchecked in silence:
// it is not a lease package, and each is reported.
package nearmiss

/* want `unknown directive "//leaseguard:bogus": want //leaseguard:lease, //leaseguard:allow or //leaseguard:sql$` */ //leaseguard:bogus
/* want `misplaced //leaseguard:lease` */ //leaseguard:lease
/* want `malformed directive "// leaseguard:lease": write //leaseguard:lease, or the package is not checked` */ // leaseguard:lease

//leaseguard:allow clcok -- not checked here, so not reported
var a = 1

// Repository is implemented elsewhere.
//
/* want `malformed directive "//leasegaurd:sql": write //leaseguard:sql$` */ //leasegaurd:sql
type Repository interface{ Exec(sql string) error }

// lease-guard:allow clock -- a near miss of allow, in a package that is not checked: not reported
var b = 2
