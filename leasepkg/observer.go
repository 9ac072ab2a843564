package leasepkg

import (
	"strconv"
	"sync"
)

// Observer is told what happens to a lease, so that an application can bridge
// it to its own metrics or logs without this package importing any.
//
// A Manager calls Observe on a goroutine of its own, one event at a time, in
// the order the events happened, never from the goroutine that renews the
// lease or makes the write: a slow observer delays no renewal, acquisition
// or write, and the call that caused an event can return before the event
// is delivered. Up to [MaxQueuedEvents] events wait for a slow observer;
// past that, new events are dropped, and the next one delivered says how
// many (Event.Dropped). [Manager.Close] waits until the events queued before
// it are delivered, so an observer that never returns blocks Close.
type Observer interface {
	Observe(Event)
}

// MaxQueuedEvents is how many events wait for a slow [Observer] before new
// ones are dropped.
const MaxQueuedEvents = 1024

// eventQueue delivers a Manager's events to its Observer in order, on a
// goroutine of its own.
type eventQueue struct {
	obs  Observer
	wake chan struct{} // a push or a close since the goroutine last looked
	done chan struct{} // closed when the goroutine has delivered all and ended

	mu      sync.Mutex
	pending []Event
	dropped int // events dropped since the last one queued
	closed  bool
}

func newEventQueue(obs Observer) *eventQueue {
	q := &eventQueue{obs: obs, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// push queues e, or drops it if MaxQueuedEvents are waiting or the queue
// is closed.
func (q *eventQueue) push(e Event) {
	q.mu.Lock()
	switch {
	case q.closed:
	case len(q.pending) >= MaxQueuedEvents:
		q.dropped++
	default:
		e.Dropped, q.dropped = q.dropped, 0
		q.pending = append(q.pending, e)
	}
	q.mu.Unlock()
	q.poke()
}

func (q *eventQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close stops the queue taking events and waits until those queued are
// delivered.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.poke()
	<-q.done
}

func (q *eventQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		batch, closed := q.pending, q.closed
		q.pending = nil
		q.mu.Unlock()
		for _, e := range batch {
			q.obs.Observe(e)
		}
		switch {
		case len(batch) > 0:
		case closed:
			return
		default:
			<-q.wake
		}
	}
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
	// Dropped is how many events were dropped just before this one because
	// MaxQueuedEvents were waiting for the observer.
	Dropped int
}
