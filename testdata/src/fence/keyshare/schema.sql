CREATE TABLE IF NOT EXISTS worker_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    epoch      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    UNIQUE (name, epoch)
);

CREATE TABLE IF NOT EXISTS orders (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    epoch   bigint NOT NULL,
    payload text   NOT NULL
);
