-- dlock-jdbc schema, version 3, PostgreSQL 12 and later. Run after version 2; safe to run again.
-- ${table} is the configured table name (default dlock_locks).
-- Lease rows: whether an acquisition found the lock held since it was granted. A release sends
-- NOTIFY only then: PostgreSQL serializes the commits of every transaction that notified, so an
-- uncontended release that notified anyway would queue behind all the others.
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS waiters BOOLEAN NOT NULL DEFAULT FALSE;
