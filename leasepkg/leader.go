package leasepkg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LeaderInfo is who holds a lease, as the database judges it.
type LeaderInfo struct {
	// Lease is the holder, epoch and term that the lease row names; zero
	// when the lease has never been acquired.
	Lease Lease
	// ExpiresAt is the row's expiry, by the database's clock.
	ExpiresAt time.Time
	// Held says the row was unexpired by the database's clock when read.
	Held bool
	// Remaining is how long the lease had left when read, by the database's
	// clock; zero when it is not held.
	Remaining time.Duration
}

// Leader reads who holds the Manager's lease. A lease that was never
// acquired returns a zero LeaderInfo with Held false. The context governs
// the query.
func (m *Manager) Leader(ctx context.Context) (LeaderInfo, error) {
	if err := m.check(); err != nil {
		return LeaderInfo{}, err
	}
	info, err := readLeader(ctx, m.pool, m.cfg.Name)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("read leader of lease %q: %w", m.cfg.Name, err)
	}
	return info, nil
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readLeader(ctx context.Context, q rowQuerier, name string) (LeaderInfo, error) {
	info := LeaderInfo{Lease: Lease{Name: name}}
	err := q.QueryRow(ctx, leaderSQL, name).Scan(&info.Lease.Holder, &info.Lease.Epoch, &info.Lease.Term, &info.ExpiresAt, &info.Held, &info.Remaining)
	if errors.Is(err, pgx.ErrNoRows) {
		return LeaderInfo{Lease: Lease{Name: name}}, nil
	}
	return info, err
}

// Observe calls fn with who holds the Manager's lease, first at once and
// then whenever the holder, the epoch or whether it is held changes, until
// ctx is done; it then returns ctx's error. Acquisitions and releases
// notify observers through LISTEN/NOTIFY on a connection of its own (one
// that all the Observe calls of a [Client]'s Managers share); a
// lease that expires without a statement, or a notification lost while
// the connection was down, is caught by reading the row again when the
// lease would expire by the database's clock and at least every
// RenewInterval. A failed connection is replaced after a RenewInterval. fn
// runs on Observe's goroutine; the lease may have changed again by the time
// it runs, and the fence, not fn, decides who may write.
func (m *Manager) Observe(ctx context.Context, fn func(LeaderInfo)) error {
	if err := m.check(); err != nil {
		return err
	}
	var last *LeaderInfo
	report := func(info LeaderInfo) {
		if last == nil || last.Lease != info.Lease || last.Held != info.Held {
			last = &info
			fn(info)
		}
	}
	if m.client != nil {
		return m.observeShared(ctx, report)
	}
	for {
		err := m.observeOn(ctx, report)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.observe(ObserveFailed, Lease{Name: m.cfg.Name}, err)
		t := time.NewTimer(m.cfg.RenewInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// observeOn listens on one connection until it fails or ctx is done.
func (m *Manager) observeOn(ctx context.Context, report func(LeaderInfo)) error {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A listening connection must not go back to the pool: it would
	// carry the LISTEN to its next user.
	defer destroy(conn)
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	for {
		info, err := readLeader(ctx, conn, m.cfg.Name)
		if err != nil {
			return err
		}
		report(info)
		wait := m.cfg.RenewInterval
		if info.Held && info.Remaining < wait {
			wait = info.Remaining + time.Millisecond
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		for {
			n, err := conn.Conn().WaitForNotification(wctx)
			if err != nil {
				cancel()
				if wctx.Err() != nil && ctx.Err() == nil {
					break // time to read the row again
				}
				return err
			}
			if n.Payload == m.cfg.Name {
				break
			}
		}
		cancel()
	}
}

// destroy closes a pooled connection and removes it from its pool.
func destroy(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Conn().Close(ctx)
	conn.Release()
}
