package leasepkg

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Healthy reports whether the Manager's leadership is in order, for a
// health or liveness check (client-go's HealthzAdaptor). It returns nil
// while no Hold or Campaign of the Manager runs a term (it is not leading,
// or is waiting to lead), and while every term it runs has had a renewal,
// or its acquisition, confirmed that was sent within the last two
// RenewIntervals and a half: one renewal may fail, its attempt lasting up
// to a RenewInterval, and the next be confirmed, without an alarm.
// Otherwise it returns an error wrapping ErrRenewalStalled that says how
// long ago the last confirmed one was sent, and whether the term's context
// has been cancelled while its function has not returned (a function that
// ignores its context, and so still acts as the leader).
//
// Healthy reads only what the Manager knows; it sends nothing to the
// database. A Manager that leads with stalled renewals loses its term
// when the TTL less the stop margin has passed (see Config.StopMargin), and
// is healthy again once its function returns, if it does.
func (m *Manager) Healthy() error {
	m.termsMu.Lock()
	terms := make(map[*Term]context.Context, len(m.terms))
	for t, ctx := range m.terms {
		terms[t] = ctx
	}
	m.termsMu.Unlock()
	var errs []error
	for t, ctx := range terms {
		if err := m.termHealth(t, ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Healthy is [Manager.Healthy] for every Manager of the Client: nil while
// each of them is healthy, or the errors of those that are not, joined.
func (c *Client) Healthy() error {
	c.mu.Lock()
	managers := make([]*Manager, 0, len(c.managers))
	for _, m := range c.managers {
		managers = append(managers, m)
	}
	c.mu.Unlock()
	var errs []error
	for _, m := range managers {
		if err := m.Healthy(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// healthWindow is how long after the last confirmed renewal was sent a
// term is still healthy: two RenewIntervals and a half.
func (c Config) healthWindow() time.Duration { return 2*c.RenewInterval + c.RenewInterval/2 }

// termHealth is Healthy for one term, whose context is ctx.
func (m *Manager) termHealth(t *Term, ctx context.Context) error {
	since := time.Since(*t.confirmed.Load()) // latency only: decides no statement
	if since <= m.cfg.healthWindow() {
		return nil
	}
	l := t.Lease()
	err := fmt.Errorf("lease %s: no renewal confirmed for %v, one due every %v: %w", l, since.Round(time.Millisecond), m.cfg.RenewInterval, ErrRenewalStalled)
	if ctx.Err() != nil {
		err = fmt.Errorf("%w; the term's context was cancelled (%w) but its function has not returned", err, context.Cause(ctx))
	}
	return err
}

// leading records that t runs with context ctx, until the returned
// function is called.
func (m *Manager) leading(t *Term, ctx context.Context) (done func()) {
	m.termsMu.Lock()
	if m.terms == nil {
		m.terms = make(map[*Term]context.Context)
	}
	m.terms[t] = ctx
	m.termsMu.Unlock()
	return func() {
		m.termsMu.Lock()
		delete(m.terms, t)
		m.termsMu.Unlock()
	}
}

// sentNow is when a statement that may confirm a term is sent; stored in
// the term once it confirms, it feeds only Healthy.
func sentNow() *time.Time {
	now := time.Now()
	return &now
}
