//go:build leaseguard_weaken

package leasepkg_test

import "github.com/leaseguard/leaseguard/leasepkg"

func init() { weaken = leasepkg.Weaken }
