-- dlock-jdbc schema, version 2, MariaDB 10.5 and later. Run after version 1; safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Lease rows record who took the lock and when, for inspection.
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS holder VARCHAR(200) CHARACTER SET utf8mb4;
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS granted_at BIGINT;
-- Session and row modes: one row per name, written at each grant, for inspection and to tell apart
-- two names whose GET_LOCK keys collide (lock_key is unique; NULL in row mode).
-- granted_at and expires_at are milliseconds since the epoch by the database's clock.
-- session_id is the holding connection: CONNECTION_ID().
CREATE TABLE IF NOT EXISTS ${table}_held (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
  lock_key   VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin UNIQUE,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  token      BIGINT       NOT NULL,
  holder     VARCHAR(200) CHARACTER SET utf8mb4,
  granted_at BIGINT,
  expires_at BIGINT,
  session_id BIGINT
) ENGINE = InnoDB;
-- Row mode: the rows that are locked with SELECT ... FOR UPDATE NOWAIT while a lock is held.
CREATE TABLE IF NOT EXISTS ${table}_rows (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY
) ENGINE = InnoDB;
