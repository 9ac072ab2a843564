package leasepkg_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leaseguard/leaseguard/examples/orders"
	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

const batchSize = 100

// BenchmarkAppend compares fenced writes (examples/orders through
// Manager.Tx: BEGIN, the fence, the insert, COMMIT) with the same
// transaction without the fence (BEGIN, the insert, COMMIT), of the same
// rows on the same database, with 1 and 8 concurrent writers under one
// lease. An op is one transaction: one order (single) or batchSize orders
// (batch). bench/append.sh turns the figures into ratios.
func BenchmarkAppend(b *testing.B) {
	for _, shape := range []string{"single", "batch"} {
		for _, writers := range []int{1, 8, 32} {
			for _, kind := range []string{"fenced", "plain"} {
				name := fmt.Sprintf("shape=%s/writers=%d/kind=%s", shape, writers, kind)
				b.Run(name, func(b *testing.B) { benchAppend(b, shape, writers, kind) })
			}
		}
	}
}

func benchAppend(b *testing.B, shape string, writers int, kind string) {
	ctx := context.Background()
	pool, m, l := benchLease(b, writers)

	var seq atomic.Int64
	key := func() string { return fmt.Sprintf("%s-%d", b.Name(), seq.Add(1)) }
	write := func() error {
		n := 1
		if shape == "batch" {
			n = batchSize
		}
		batch := make([]orders.Order, n)
		for i := range batch {
			batch[i] = orders.Order{Key: key(), Payload: "item"}
		}
		if kind == "fenced" {
			return orders.AppendOrders(ctx, m, l, batch)
		}
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
			return orders.Insert(ctx, tx, l, batch...)
		})
	}

	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.ResetTimer()
	for range writers {
		wg.Go(func() {
			for ops.Add(1) <= int64(b.N) {
				if err := write(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	rows := 1
	if shape == "batch" {
		rows = batchSize
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "orders/s")
}

// BenchmarkRenew measures one renewal's round trip, as Hold sends it, and
// reports the median and 99th percentile.
func BenchmarkRenew(b *testing.B) {
	ctx := context.Background()
	_, m, l := benchLease(b, 1)
	var err error
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if l, err = m.Renew(ctx, l); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// benchLease returns a pool with room for writers on a fresh, migrated
// database, a Manager on it, and a lease it holds.
func benchLease(b *testing.B, writers int) (*pgxpool.Pool, *leasepkg.Manager, leasepkg.Lease) {
	ctx := context.Background()
	pool := benchPool(b, writers)
	logSettings(b, pool)
	m, err := leasepkg.New(pool, leasepkg.DefaultConfig(leaseName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	if err := m.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if err := orders.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	l, err := m.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return pool, m, l
}

func benchPool(b *testing.B, writers int) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(pgtest.DB(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = int32(writers) + 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}
