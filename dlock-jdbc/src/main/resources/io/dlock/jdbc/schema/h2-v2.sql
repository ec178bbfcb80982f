-- dlock-jdbc schema, version 2, H2 2.x. Run after version 1; safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Lease rows record who took the lock and when, for inspection.
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS holder VARCHAR(200);
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS granted_at BIGINT;
-- Row mode (H2 has no session locks): one row per name written at each grant, for inspection.
-- granted_at and expires_at are milliseconds since the epoch by the database's clock.
-- session_id is the holding connection: SESSION_ID().
CREATE TABLE IF NOT EXISTS ${table}_held (
  name       VARCHAR(256) NOT NULL PRIMARY KEY,
  lock_key   VARCHAR(64)  UNIQUE,
  owner      VARCHAR(160),
  token      BIGINT       NOT NULL,
  holder     VARCHAR(200),
  granted_at BIGINT,
  expires_at BIGINT,
  session_id BIGINT
);
-- Row mode: the rows that are locked with SELECT ... FOR UPDATE NOWAIT while a lock is held.
CREATE TABLE IF NOT EXISTS ${table}_rows (
  name       VARCHAR(256) NOT NULL PRIMARY KEY
);
