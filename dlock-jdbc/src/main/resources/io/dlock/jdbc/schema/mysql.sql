-- dlock-jdbc schema, MySQL 8.0 and later (also runs on MariaDB). Every statement is IF NOT EXISTS
-- (or INSERT IGNORE): safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Binary strings: lock names and owner tokens compare byte for byte (case, accents and trailing
-- spaces matter; MySQL's utf8mb4_bin would ignore trailing spaces, and MySQL's and MariaDB's NO PAD
-- binary collations have different names).
-- Fencing tokens come from the counter rows of ${table}_fences (MySQL has no sequences): one row
-- per slot of the lock names' CRC-32, created at its first use and never deleted, so a token never
-- goes backwards, even when lock rows are deleted. Never delete or lower its rows. All 1,024 rows are
-- created here, so that no acquisition has to create one (first uses racing would deadlock).
CREATE TABLE IF NOT EXISTS ${table}_fences (
  slot INT    NOT NULL PRIMARY KEY,
  v    BIGINT NOT NULL
) ENGINE = InnoDB;
INSERT IGNORE INTO ${table}_fences (slot, v)
  SELECT a.n + 4 * b.n + 16 * c.n + 64 * d.n + 256 * e.n, 0
    FROM (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) a
   CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) b
   CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) c
   CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
   CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) e;
CREATE TABLE IF NOT EXISTS ${table} (
  name       VARBINARY(1024) NOT NULL PRIMARY KEY,
  owner      VARBINARY(640)  NOT NULL,
  holds      INT             NOT NULL,
  token      BIGINT          NOT NULL,
  -- Milliseconds since the epoch by the database's clock; never written from a client clock.
  expires_at BIGINT          NOT NULL,
  -- Who took the lock and when, for inspection.
  holder     VARCHAR(200)    CHARACTER SET utf8mb4,
  granted_at BIGINT,
  -- A random number per grant: its token (0 until then) is drawn and written after the grant's
  -- commit, only into the row of the same grant.
  grant_nonce BIGINT
) ENGINE = InnoDB;
-- Session and row modes: one row per name, written at each grant, for inspection and to tell apart
-- two names whose GET_LOCK keys collide (lock_key is unique; NULL in row mode).
-- granted_at and expires_at are milliseconds since the epoch by the database's clock.
-- session_id is the holding connection: CONNECTION_ID().
CREATE TABLE IF NOT EXISTS ${table}_held (
  name       VARBINARY(1024) NOT NULL PRIMARY KEY,
  lock_key   VARBINARY(256)  UNIQUE,
  owner      VARBINARY(640),
  token      BIGINT          NOT NULL,
  holder     VARCHAR(200)    CHARACTER SET utf8mb4,
  granted_at BIGINT,
  expires_at BIGINT,
  session_id BIGINT
) ENGINE = InnoDB;
-- Row mode: the rows that are locked with SELECT ... FOR UPDATE NOWAIT while a lock is held.
CREATE TABLE IF NOT EXISTS ${table}_rows (
  name       VARBINARY(1024) NOT NULL PRIMARY KEY
) ENGINE = InnoDB;
-- Leased semaphores (lease-row mode). One counter row per semaphore, created at its first acquisition
-- and never deleted: it orders the acquisitions of the semaphore (each locks it) and holds its last
-- fencing token, so a token never goes backwards, even after every grant expired and was deleted.
CREATE TABLE IF NOT EXISTS ${table}_semaphores (
  name       VARBINARY(1024) NOT NULL PRIMARY KEY,
  fence      BIGINT       NOT NULL
) ENGINE = InnoDB;
-- One row per grant of permits. Times are milliseconds since the epoch by the database's clock.
CREATE TABLE IF NOT EXISTS ${table}_permits (
  semaphore  VARBINARY(1024) NOT NULL,
  owner      VARBINARY(640) NOT NULL,
  permits    INTEGER      NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  -- Who took the permits and when, for inspection.
  holder     VARCHAR(200) CHARACTER SET utf8mb4,
  granted_at BIGINT,
  PRIMARY KEY (semaphore, owner)
) ENGINE = InnoDB;
