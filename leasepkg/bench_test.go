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

	"github.com/leaseguard/leaseguard/internal/pgtest"
	"github.com/leaseguard/leaseguard/leasepkg"
)

const batchSize = 100

// The unfenced baselines: the same rows in the same transaction shape as the
// fenced writes (a lone statement for one order; begin, insert and commit
// in one round trip for a batch), without the fence.
const (
	plainInsertSQL = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload)
VALUES ($1, $3, $2, $4, $5)`
	plainBatchSQL = `INSERT INTO orders (lease_name, epoch, holder, order_key, payload)
SELECT $1::text, $3::bigint, $2::text, o.order_key, o.payload
  FROM unnest($4::text[], $5::text[]) AS o(order_key, payload)`
)

// BenchmarkAppend compares fenced writes with unfenced inserts of the same
// rows on the same database, with 1 and 8 concurrent writers under one
// lease. An op is one transaction: one order (single) or batchSize orders
// (batch). bench/append.sh turns the figures into ratios.
func BenchmarkAppend(b *testing.B) {
	for _, shape := range []string{"single", "batch"} {
		for _, writers := range []int{1, 8} {
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
		switch shape + "/" + kind {
		case "single/fenced":
			return m.AppendOrder(ctx, l, leasepkg.Order{Key: key(), Payload: "item"})
		case "single/plain":
			_, err := pool.Exec(ctx, plainInsertSQL, l.Name, l.Holder, l.Epoch, key(), "item")
			return err
		}
		orders := make([]leasepkg.Order, batchSize)
		keys, payloads := make([]string, batchSize), make([]string, batchSize)
		for i := range orders {
			orders[i] = leasepkg.Order{Key: key(), Payload: "item"}
			keys[i], payloads[i] = orders[i].Key, "item"
		}
		if kind == "fenced" {
			return m.AppendOrders(ctx, l, orders)
		}
		return plainTx(ctx, pool, plainBatchSQL, l.Name, l.Holder, l.Epoch, keys, payloads)
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

// plainTx mirrors AppendOrders' transaction without the fence: BEGIN, the
// statement and COMMIT in one round trip.
func plainTx(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) error {
	batch := &pgx.Batch{}
	batch.BeginTx(pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	batch.Queue(sql, args...)
	batch.Queue("COMMIT")
	br := pool.SendBatch(ctx, batch)
	tx := br.Tx()
	err := br.Close()
	_ = tx.Rollback(ctx) // after the COMMIT, only returns the connection
	return err
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
	m, err := leasepkg.New(pool, leasepkg.DefaultConfig(leaseName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	if err := m.Migrate(ctx); err != nil {
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
