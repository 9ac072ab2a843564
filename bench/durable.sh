#!/bin/sh
# bench/durable.sh COMMAND [ARG...]
#
# Runs COMMAND with LEASE_DATABASE_URL pointing at a cluster of its own
# with PostgreSQL's durable defaults (fsync, full_page_writes and
# synchronous_commit on), unlike the tests' throwaway cluster, which turns
# the first two off. The cluster is started from $PGBIN (default
# /usr/lib/postgresql/15/bin) in a temporary directory and stopped at the
# end; as root it runs the server as postgres. For the lease package's
# benchmarks: bench/durable.sh bench/append.sh 5.
set -eu
bin=${PGBIN:-/usr/lib/postgresql/15/bin}
dir=$(mktemp -d)
as() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
port=$((20000 + $$ % 10000))
as "'$bin/initdb' -D '$dir/data' -U postgres -A trust -E UTF8 --locale=C" >/dev/null
as "'$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200 -c track_commit_timestamp=on\" start" >/dev/null
trap 'as "'"'"'$bin/pg_ctl'"'"' -D '"'"'$dir/data'"'"' -m fast stop" >/dev/null; rm -rf "$dir"' EXIT
export LEASE_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
"$@"
