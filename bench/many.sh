#!/bin/sh
# bench/many.sh [durable]
#
# Many leases per process: leasepkg's BenchmarkManyLeases (1, 100, 1,000 and
# 10,000 leases in one Client: renewal statements per tick, connections,
# CPU per lease-second) over 10 renewal ticks, BenchmarkLoneManagers (1 and
# 100 leases, a Manager each, for comparison), and BenchmarkManyFailover
# (1,000 leases: the time until a second Client holds them all after the
# first stops renewing), three times.
#
# By default on the tests' throwaway cluster (fsync and full_page_writes
# off), or on $LEASE_DATABASE_URL. With "durable", on a cluster of its own
# with PostgreSQL's durable defaults (bench/durable.sh). Each benchmark logs
# the server's settings. LEASE_BENCH, a -bench pattern, runs some of them
# (ManyLeases|LoneManagers|ManyFailover by default).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = durable ]; then
	shift
	exec bench/durable.sh bench/many.sh "$@"
fi
bench=${LEASE_BENCH:-ManyLeases|LoneManagers|ManyFailover}
go test ./leasepkg/ -run '^$' -bench "$bench" -benchtime 10x -count 1 -timeout 30m -skip Failover
case $bench in *Failover*)
	go test ./leasepkg/ -run '^$' -bench "$bench" -benchtime 1x -count 3 -timeout 30m -skip 'ManyLeases|LoneManagers'
esac
