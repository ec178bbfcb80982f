-- dlock-jdbc schema, MariaDB 10.5 and later (sequences and INSERT ... RETURNING). Every statement is
-- IF NOT EXISTS: safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Binary NO PAD collation: lock names, owner tokens and session keys compare exactly (case, accents
-- and trailing spaces matter; utf8mb4_bin is a PAD SPACE collation, under which "a" and "a " are
-- one key). A table with a padding collation is refused at start.
-- Fencing tokens come from the sequence: it never goes backwards, even when lock rows are deleted.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence;
-- Lease rows. Times are milliseconds since the epoch by the database's clock, never a client's.
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  holds      INT          NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  -- Who took the lock and when, for inspection.
  holder     VARCHAR(200) CHARACTER SET utf8mb4,
  granted_at BIGINT,
  -- A random number per grant, written by the statement that makes it: a grant whose commit
  -- was answered by a lost connection is undone by it, and only it.
  grant_nonce BIGINT
) ENGINE = InnoDB;
-- Session and row modes: one row per name, written at each grant, for inspection and to tell apart
-- two names whose GET_LOCK keys collide (lock_key is unique; NULL in row mode).
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
-- Leased semaphores (lease-row mode). One counter row per semaphore, created at its first acquisition
-- and never deleted: it orders the acquisitions of the semaphore (each locks it) and holds its last
-- fencing token, so a token never goes backwards, even after every grant expired and was deleted.
CREATE TABLE IF NOT EXISTS ${table}_semaphores (
  name       VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
  fence      BIGINT       NOT NULL
) ENGINE = InnoDB;
-- One row per grant of permits. Times are milliseconds since the epoch by the database's clock.
CREATE TABLE IF NOT EXISTS ${table}_permits (
  semaphore  VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  permits    INTEGER      NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  -- Who took the permits and when, for inspection.
  holder     VARCHAR(200) CHARACTER SET utf8mb4,
  granted_at BIGINT,
  PRIMARY KEY (semaphore, owner)
) ENGINE = InnoDB;
