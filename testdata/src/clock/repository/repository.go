//leaseguard:lease

// Package repository writes through interfaces whose implementation is in
// a package it does not import: repo.Querier carries //leaseguard:sql,
// driver.Executor is named by -clock.sql-interfaces, and store is this
// package's own.
package repository

import (
	"context"
	"log"
	"time"

	"example.com/driver"
	"example.com/repo"
)

// Service keeps the cluster's membership.
type Service struct {
	DB    repo.Querier
	Cache repo.Cache
	exec  driver.Executor
	store driver.Store
	locks repo.Leases
	clock Clock
	ttl   time.Duration
}

// Clock is an injected clock.
type Clock interface{ Now() time.Time }

func (s *Service) upsert(ctx context.Context, name string) error {
	var row repo.ClusterMembership
	row.Name = name
	row.Expiry = time.Now().Add(s.ttl) // want `time.Now flows into an argument of repo.Querier.UpsertClusterMembership, which executes SQL`
	return s.DB.UpsertClusterMembership(ctx, &row)
}

func (s *Service) literal(ctx context.Context, name string) error {
	return s.DB.UpsertClusterMembership(ctx, &repo.ClusterMembership{Name: name, Expiry: time.Now()}) // want `time.Now flows into an argument of repo.Querier.UpsertClusterMembership, which executes SQL`
}

func (s *Service) throughHelper(ctx context.Context, name string) error {
	row := &repo.ClusterMembership{Name: name}
	row.Expiry = s.clock.Now() // want `repository.Clock.Now flows into an argument of repo.Save, which passes it to SQL`
	return repo.Save(ctx, s.DB, row)
}

func (s *Service) reelect(ctx context.Context, params *driver.LeaderElectParams) (bool, error) {
	if s.clock.Now().Sub(time.Time{}) > s.ttl { // want `repository.Clock.Now decides whether driver.Executor.LeaderAttemptReelect runs`
		return false, nil
	}
	return s.exec.LeaderAttemptReelect(ctx, params)
}

func (s *Service) nowParam(ctx context.Context, name string) (bool, error) {
	now := time.Now() // want `time.Now flows into an argument of driver.Executor.LeaderResign, which executes SQL`
	return s.exec.LeaderResign(ctx, &driver.LeaderElectParams{Name: name, Now: &now})
}

func (s *Service) inTx(ctx context.Context, tx driver.ExecutorTx, params driver.LeaderElectParams, deadline time.Time) {
	params.TTL = time.Until(deadline) // want `time.Until flows into an argument of driver.Executor.LeaderAttemptReelect, which executes SQL`
	tx.LeaderAttemptReelect(ctx, &params)
}

// Methods promoted from a clock that an SQL interface embeds read the
// clock; they execute no SQL.

func (s *Service) renewEmbedded(ctx context.Context, name string) error {
	until := s.locks.Now().Add(s.ttl) // want `repo.Clock.Now flows into an argument of repo.Leases.Renew, which executes SQL`
	return s.locks.Renew(ctx, name, until)
}

func (s *Service) releaseEmbedded(ctx context.Context, params driver.LeaderElectParams) error {
	now := s.store.Now() // want `driver.Clock.Now flows into an argument of driver.Store.Release, which executes SQL`
	params.Now = &now
	return s.store.Release(ctx, &params)
}

// store is this package's own query interface.
//
//leaseguard:sql
type store interface { // want store:"executes SQL"
	touch(ctx context.Context, name string, at time.Time) error
}

func touch(ctx context.Context, st store) error {
	return st.touch(ctx, "a", time.Now()) // want `time.Now flows into an argument of repository.store.touch, which executes SQL`
}

// Not reported.

func (s *Service) otherField(ctx context.Context, name string) error {
	row := repo.ClusterMembership{Name: name, Expiry: time.Now()} // ok: only the name reaches SQL
	return s.DB.DeleteClusterMembership(ctx, row.Name)
}

func (s *Service) cached(ctx context.Context, name string) error {
	return s.Cache.Put(ctx, &repo.ClusterMembership{Name: name, Expiry: time.Now()}) // ok: a cache, no SQL
}

func (s *Service) databaseNow(ctx context.Context, name string) error {
	now, err := s.locks.DBNow(ctx) // ok: the database's clock, asked by a call that takes a context and may fail
	if err != nil {
		return err
	}
	if s.locks.Name() == "" {
		return nil
	}
	return s.locks.Renew(ctx, name, now.Add(s.ttl))
}

func (s *Service) resultOnly(ctx context.Context, params *driver.LeaderElectParams) {
	start := time.Now()
	ok, err := s.exec.LeaderAttemptReelect(ctx, params)
	log.Printf("reelect: %v %v in %v", ok, err, time.Since(start)) // ok: latency in a log line
}
