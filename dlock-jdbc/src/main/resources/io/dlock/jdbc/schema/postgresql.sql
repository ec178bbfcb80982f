-- dlock-jdbc schema, PostgreSQL 12 and later. Every statement is IF NOT EXISTS: safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Fencing tokens come from the sequence: it never goes backwards, even when lock rows are deleted.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence;
-- Lease rows. Times are milliseconds since the epoch by the database's clock, never a client's.
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARCHAR(256) NOT NULL PRIMARY KEY,
  owner      VARCHAR(160) NOT NULL,
  holds      INTEGER      NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  -- Who took the lock and when, for inspection.
  holder     VARCHAR(200),
  granted_at BIGINT,
  -- Whether an acquisition found the lock held since it was granted. A release sends NOTIFY only
  -- then: PostgreSQL serializes the commits of every transaction that notified, so an uncontended
  -- release that notified anyway would queue behind all the others.
  waiters    BOOLEAN      NOT NULL DEFAULT FALSE
);
-- Session and row modes: one row per name, written at each grant, for inspection and to tell apart
-- two names whose advisory lock keys collide (lock_key is unique; NULL in row mode).
-- session_id is the holding connection: pg_backend_pid().
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
-- Leased semaphores (lease-row mode). One counter row per semaphore, created at its first acquisition
-- and never deleted: it orders the acquisitions of the semaphore (each locks it) and holds its last
-- fencing token, so a token never goes backwards, even after every grant expired and was deleted.
CREATE TABLE IF NOT EXISTS ${table}_semaphores (
  name       VARCHAR(256) NOT NULL PRIMARY KEY,
  fence      BIGINT       NOT NULL
);
-- One row per grant of permits. Times are milliseconds since the epoch by the database's clock.
CREATE TABLE IF NOT EXISTS ${table}_permits (
  semaphore  VARCHAR(256) NOT NULL,
  owner      VARCHAR(160) NOT NULL,
  permits    INTEGER      NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  -- Who took the permits and when, for inspection.
  holder     VARCHAR(200),
  granted_at BIGINT,
  PRIMARY KEY (semaphore, owner)
);
