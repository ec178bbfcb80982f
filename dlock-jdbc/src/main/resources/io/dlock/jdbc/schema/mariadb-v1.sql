-- dlock-jdbc schema, version 1, MariaDB 10.5 and later (sequences and INSERT ... RETURNING).
-- ${table} is the configured table name (default dlock_locks).
-- Binary NO PAD collation: lock names and owner tokens compare exactly (case, accents and trailing
-- spaces matter; utf8mb4_bin is a PAD SPACE collation, under which "a" and "a " are one key).
-- Fencing tokens come from the sequence: it never goes backwards, even when lock rows are deleted.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence;
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  holds      INT          NOT NULL,
  token      BIGINT       NOT NULL,
  -- Milliseconds since the epoch by the database's clock; never written from a client clock.
  expires_at BIGINT       NOT NULL,
  -- A random number per grant, written by the statement that makes it: a grant whose commit
  -- was answered by a lost connection is undone by it, and only it.
  grant_nonce BIGINT
) ENGINE = InnoDB;
