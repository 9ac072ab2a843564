//leaseguard:lease

// Package broken does not compile.
package broken

var x int = "not an int"
