package leasepkg

import "strconv"

// Observer is told what happens to a lease, so that an application can bridge
// it to its own metrics or logs without this package importing any. Observe
// is called synchronously from the goroutine that saw the event and must not
// block.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// EventKind says what happened.
type EventKind int

const (
	// Acquired means this holder acquired the lease, at Event.Lease.Epoch.
	Acquired EventKind = iota + 1
	// Renewed means a renewal was confirmed; under PerRenewal, Lease has the new epoch.
	Renewed
	// RenewFailed means a renewal failed without proof that the lease is lost
	// (a network error, a timeout); the holder keeps trying until the lease
	// could have expired.
	RenewFailed
	// Lost means the lease is lost; Err wraps ErrLeaseLost.
	Lost
	// Released means the holder gave the lease up by expiring its row.
	Released
	// WriteRejected means a fenced write was rejected; Err wraps ErrStaleFence.
	WriteRejected
	// TerminateFailed means a takeover could not end the idle transactions
	// that blocked it (Config.TerminateBlockers), for want of privilege or
	// otherwise; Err says why.
	TerminateFailed
	// ObserveFailed means [Manager.Observe] lost its connection, or could
	// not read the lease; it tries again after a RenewInterval. Err says
	// why.
	ObserveFailed
)

func (k EventKind) String() string {
	switch k {
	case Acquired:
		return "acquired"
	case Renewed:
		return "renewed"
	case RenewFailed:
		return "renew-failed"
	case Lost:
		return "lost"
	case Released:
		return "released"
	case WriteRejected:
		return "write-rejected"
	case TerminateFailed:
		return "terminate-failed"
	case ObserveFailed:
		return "observe-failed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one thing that happened to a lease.
type Event struct {
	Kind  EventKind
	Lease Lease // the lease as this holder knew it
	Err   error // why, for RenewFailed, Lost and WriteRejected
}
