-- The lease rows and the rows they guard live in one database, so that a
-- fenced write and its fence share one transaction.

-- One row per lease name, never deleted: a row deleted and inserted again
-- would restart the epoch at 1 and hand out fencing tokens already used.
-- UNIQUE (name, epoch) makes the epoch a key column, so that any statement
-- that changes the epoch takes a lock that conflicts with a fenced write's
-- FOR KEY SHARE, while a renewal that only moves expires_at does not. The
-- package's own epoch changes also lock the row FOR UPDATE; Migrate and Open
-- check that this index is there.
CREATE TABLE IF NOT EXISTS worker_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    epoch      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    UNIQUE (name, epoch)
);

-- The guarded table: each row records the lease name, epoch and holder that
-- wrote it. order_key is the caller's idempotency key: a write whose outcome
-- is unknown can be looked up, or retried without landing twice.
CREATE TABLE IF NOT EXISTS orders (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lease_name text        NOT NULL,
    epoch      bigint      NOT NULL,
    holder     text        NOT NULL,
    order_key  text        NOT NULL UNIQUE,
    payload    text        NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
