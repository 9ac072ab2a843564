//go:build leaseguard_weaken

package main

import "github.com/leaseguard/leaseguard/leasepkg"

func init() { weaken = leasepkg.Weaken }
