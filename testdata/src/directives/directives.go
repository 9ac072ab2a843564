// want package:"lease package"
//leaseguard:lease

// Package directives has malformed leaseguard directives. Each expectation
// stands in a block comment before the directive, which must end its line.
package directives

/* want `misplaced //leaseguard:lease: it must come before the package clause` */ //leaseguard:lease

/* want `//leaseguard:allow imports gives no reason` */ //leaseguard:allow imports
var a = 1

/* want `gives no reason` */ //leaseguard:allow imports --
var b = 2

/* want `//leaseguard:allow names unknown rule "clocks" \(rules: clock, fence, imports\)` */ //leaseguard:allow clocks -- typo
var c = 3

/* want `//leaseguard:allow names no rule` */ //leaseguard:allow -- no rule
var d = 4

/* want `//leaseguard:allow imports: want //leaseguard:allow RULE -- reason` */ //leaseguard:allow imports because
var e = 5

/* want `unknown directive //leaseguard:alow` */ //leaseguard:alow imports -- misspelled
var f = 6

//leaseguard:allow imports -- fine
var g = 7
