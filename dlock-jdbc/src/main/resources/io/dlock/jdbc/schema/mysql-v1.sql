-- dlock-jdbc schema, version 1, MySQL 8.0 and later (also runs on MariaDB).
-- ${table} is the configured table name (default dlock_locks).
-- Binary collation: lock names and owner tokens compare exactly (case and accents matter).
-- Fencing tokens come from the counter rows of ${table}_fences (MySQL has no sequences): one row
-- per slot of the lock names' CRC-32, created at its first use and never deleted, so a token never
-- goes backwards, even when lock rows are deleted. Never delete or lower its rows.
CREATE TABLE IF NOT EXISTS ${table}_fences (
  slot INT    NOT NULL PRIMARY KEY,
  v    BIGINT NOT NULL
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  holds      INT          NOT NULL,
  token      BIGINT       NOT NULL,
  -- Milliseconds since the epoch by the database's clock; never written from a client clock.
  expires_at BIGINT       NOT NULL,
  -- Who took the lock and when, for inspection.
  holder     VARCHAR(200) CHARACTER SET utf8mb4,
  granted_at BIGINT
) ENGINE = InnoDB;
