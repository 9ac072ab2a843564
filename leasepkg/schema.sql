-- The lease rows. The rows they guard are the caller's, in tables of the
-- same database, so that a fenced write and its fence share one
-- transaction.

-- One row per lease name, never deleted: a row deleted and inserted again
-- would restart the epoch at 1 and hand out fencing tokens already used.
-- UNIQUE (name, epoch) makes the epoch a key column, so that any statement
-- that changes the epoch takes a lock that conflicts with a fenced write's
-- FOR KEY SHARE, while a renewal that only moves expires_at does not. The
-- package's own epoch changes also lock the row FOR UPDATE; Migrate and Open
-- check that this index is there.
-- term identifies the holder's term, the acquisition that granted it, apart
-- from the holder's name: two processes configured with one holder id are
-- two terms, and only the process that acquired a term renews it.
CREATE TABLE IF NOT EXISTS worker_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    epoch      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    term       text        NOT NULL DEFAULT '',
    UNIQUE (name, epoch)
);

-- A lease table that an earlier version made has no term column; adding it
-- takes a lock that waits for every open transaction on the table, so only
-- when it is missing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute
                    WHERE attrelid = 'worker_leases'::regclass AND attname = 'term' AND NOT attisdropped) THEN
        ALTER TABLE worker_leases ADD COLUMN term text NOT NULL DEFAULT '';
    END IF;
END
$$;

-- Epochs only grow per lease name, whatever happens to the row: a lease row
-- deleted (or truncated, or renamed) would be inserted again at epoch 1, and
-- an epoch moved back would be granted again, handing out fencing tokens
-- already used; an epoch is granted to one holder. The triggers refuse
-- those statements, ALWAYS so that session_replication_role = replica does
-- not skip them. To free a lease, expire its row. Migrate creates a missing
-- trigger (an older schema) and leaves existing ones alone; CheckSchema
-- fails on a missing or disabled one.
CREATE OR REPLACE FUNCTION worker_leases_keep() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'worker_leases: % refused: a lease row is never deleted, renamed, moved back to an earlier epoch or given to another holder at the same epoch, since fencing tokens would be reused', TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'To free a lease, expire its row: set expires_at to clock_timestamp().';
END
$$;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgrelid = 'worker_leases'::regclass AND tgname = 'worker_leases_keep_rows') THEN
        CREATE TRIGGER worker_leases_keep_rows BEFORE DELETE ON worker_leases
            FOR EACH ROW EXECUTE FUNCTION worker_leases_keep();
        ALTER TABLE worker_leases ENABLE ALWAYS TRIGGER worker_leases_keep_rows;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgrelid = 'worker_leases'::regclass AND tgname = 'worker_leases_no_truncate') THEN
        CREATE TRIGGER worker_leases_no_truncate BEFORE TRUNCATE ON worker_leases
            FOR EACH STATEMENT EXECUTE FUNCTION worker_leases_keep();
        ALTER TABLE worker_leases ENABLE ALWAYS TRIGGER worker_leases_no_truncate;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgrelid = 'worker_leases'::regclass AND tgname = 'worker_leases_epoch_grows') THEN
        CREATE TRIGGER worker_leases_epoch_grows BEFORE UPDATE OF name, epoch, holder ON worker_leases
            FOR EACH ROW WHEN (NEW.name <> OLD.name OR NEW.epoch < OLD.epoch
                               OR (NEW.epoch = OLD.epoch AND NEW.holder <> OLD.holder))
            EXECUTE FUNCTION worker_leases_keep();
        ALTER TABLE worker_leases ENABLE ALWAYS TRIGGER worker_leases_epoch_grows;
    END IF;
END
$$;
