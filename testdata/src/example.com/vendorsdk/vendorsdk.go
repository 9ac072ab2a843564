// Package vendorsdk is a vendor SDK that only a setting bans.
package vendorsdk

// Call calls the vendor.
func Call() {}
