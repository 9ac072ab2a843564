// Command leaseguard checks lease packages: no HTTP client or model SDK in
// the write path, directly or transitively; no process clock deciding a
// write; and every write fenced, under a row lock, by the database's clock.
//
//	go vet -vettool=$(command -v leaseguard) ./...
//	leaseguard ./...
//	leaseguard -C dir ./...
//
// See the README for the rules, their flags and exit codes.
package main

import "github.com/leaseguard/leaseguard/internal/driver"

func main() { driver.Main() }
