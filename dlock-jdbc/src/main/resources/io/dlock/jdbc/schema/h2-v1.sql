-- dlock-jdbc schema, version 1, H2 2.x.
-- ${table} is the configured table name (default dlock_locks).
-- Fencing tokens come from the sequence: it never goes backwards, even when lock rows are deleted.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence;
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARCHAR(256) NOT NULL PRIMARY KEY,
  owner      VARCHAR(160) NOT NULL,
  holds      INTEGER      NOT NULL,
  token      BIGINT       NOT NULL,
  -- Milliseconds since the epoch by the database's clock; never written from a client clock.
  expires_at BIGINT       NOT NULL
);
