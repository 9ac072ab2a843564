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

/* want `unknown directive "//leaseguard:alow": want //leaseguard:lease, //leaseguard:allow or //leaseguard:sql$` */ //leaseguard:alow imports -- misspelled
var f = 6

//leaseguard:allow imports -- fine
var g = 7

//leaseguard:allow clock, fence -- a list, with spaces after the commas
var h = 8

//leaseguard:allow clock ,fence,imports -- and before them
var i = 9

/* want `//leaseguard:allow "clock,,fence": a rule name is empty; want a comma-separated list of rules, then -- reason` */ //leaseguard:allow clock,,fence -- doubled comma
var j = 10

/* want `//leaseguard:allow clock: "fence" before -- is not a rule; separate rules with commas` */ //leaseguard:allow clock fence -- no comma
var k = 11

/* want `//leaseguard:allow "clock,,fence": a rule name is empty` */ //leaseguard:allow clock, , fence -- empty
var l = 12

/* want `//leaseguard:allow clock,fence gives no reason` */ //leaseguard:allow clock, fence
var m = 13

/* want `malformed directive "// leaseguard:allow imports -- spaced": write //leaseguard:allow RULE -- reason$` */ // leaseguard:allow imports -- spaced
var n = 14

/* want `malformed directive "//lease-guard:allow imports -- misspelt": write //leaseguard:allow RULE -- reason$` */ //lease-guard:allow imports -- misspelt
var o = 15

/* want `malformed directive "// leaseguard:lease": write //leaseguard:lease$` */ // leaseguard:lease

/* want `//leaseguard:lease takes nothing after it, found "// note"$` */ //leaseguard:lease // note
