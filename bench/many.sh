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
# off), or on $LEASE_DATABASE_URL. With "durable", on a
# cluster of its own with PostgreSQL's durable defaults (all three on),
# started from $PGBIN (default /usr/lib/postgresql/15/bin) in a temporary
# directory and stopped at the end; as root it runs the server as postgres.
# Each benchmark logs the server's settings. LEASE_BENCH, a -bench pattern,
# runs some of them (ManyLeases|LoneManagers|ManyFailover by default).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = durable ]; then
	bin=${PGBIN:-/usr/lib/postgresql/15/bin}
	dir=$(mktemp -d)
	as() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
	[ "$(id -u)" = 0 ] && chown postgres "$dir"
	port=$((20000 + $$ % 10000))
	as "'$bin/initdb' -D '$dir/data' -U postgres -A trust -E UTF8 --locale=C" >/dev/null
	as "'$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200 -c track_commit_timestamp=on\" start" >/dev/null
	trap 'as "'"'"'$bin/pg_ctl'"'"' -D '"'"'$dir/data'"'"' -m fast stop" >/dev/null; rm -rf "$dir"' EXIT
	export LEASE_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
fi
bench=${LEASE_BENCH:-ManyLeases|LoneManagers|ManyFailover}
go test ./leasepkg/ -run '^$' -bench "$bench" -benchtime 10x -count 1 -timeout 30m -skip Failover
case $bench in *Failover*)
	go test ./leasepkg/ -run '^$' -bench "$bench" -benchtime 1x -count 3 -timeout 30m -skip 'ManyLeases|LoneManagers'
esac
