package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Row locks: the lock's row in {@code <table>_rows} (inserted once, in its own transaction) is
 * locked with {@code SELECT ... FOR UPDATE NOWAIT} in a transaction that stays open on the holder's
 * dedicated connection; release commits. {@code NOWAIT} answers at once when another transaction
 * holds the row, so a waiter never blocks in the database past its bound and holds no connection
 * between attempts.
 *
 * <p>The fencing token is drawn from the sequence {@code <table>_fence} in the locking statement
 * (MySQL, which has none, draws it from a counter row in autocommit once the row is locked: {@link
 * #drawApart}). A counter bumped inside the holding transaction would roll back with a holder whose
 * connection dies, and the next holder would get the same token again; a sequence never goes back.
 * The grant is recorded in {@code <table>_held} through another connection, since the holding
 * transaction's own writes are invisible to others until it ends.
 */
abstract class RowLockStatements extends HeldLockStatements {
  private final String select;
  private final String takeOver;
  private final String exists;
  private final String renewLiveRecord;
  private final String liveRecordHeld;

  RowLockStatements(String table, Duration statementTimeout, String nowMillis) {
    super(table, statementTimeout, nowMillis);
    this.select =
        "SELECT "
            + nextToken()
            + ", "
            + sessionIdSql()
            + boundsSql()
            + " FROM "
            + table
            + "_rows WHERE name = ? "
            + lockClause();
    this.exists = "SELECT 1 FROM " + table + "_rows WHERE name = ?";
    // sessionAlive() is a subclass's constant expression on the alias h, safe to call here.
    this.renewLiveRecord =
        "UPDATE "
            + held
            + " h SET expires_at = GREATEST(COALESCE(expires_at, 0), "
            + now
            + " + ?) WHERE h.name = ? AND h.owner IS NOT NULL AND h.owner = ? AND h.token = ? AND "
            + sessionAlive();
    this.liveRecordHeld =
        "SELECT 1 FROM "
            + held
            + " h WHERE h.name = ? AND h.token = ? AND h.owner IS NOT NULL AND "
            + sessionAlive();
    this.takeOver =
        "UPDATE "
            + held
            + " SET lock_key = NULL, owner = ?, token = ?, holder = ?, granted_at = "
            + now
            + ", expires_at = "
            + now
            + " + ?, session_id = ? WHERE name = ? AND (NOT ("
            + liveRecord(held)
            + ") OR token = ?)";
  }

  /** The INSERT of a record, parameters name, owner, token, holder, lease, session id. */
  String insertValues() {
    return "INSERT INTO "
        + held
        + " (name, lock_key, owner, token, holder, granted_at, expires_at, session_id)"
        + " VALUES (?, NULL, ?, ?, ?, "
        + now
        + ", "
        + now
        + " + ?, ?)";
  }

  @Override
  String mode() {
    return "row";
  }

  /**
   * How the row is locked without waiting: {@code FOR UPDATE NOWAIT} fails at once when another
   * transaction holds the row; {@code SKIP LOCKED} returns no row instead (see {@link
   * #skipsLocked()}).
   */
  String lockClause() {
    return "FOR UPDATE NOWAIT";
  }

  /** Whether {@link #lockClause()} skips a locked row instead of failing. */
  boolean skipsLocked() {
    return false;
  }

  /**
   * Columns that bound the granted session on the server, with one parameter (the idle limit in
   * milliseconds), or nothing where the dialect bounds it otherwise ({@link #bound}).
   */
  String boundsSql() {
    return "";
  }

  /**
   * Bounds the session of a grant on {@code c} (inside the holding transaction) where {@link
   * #boundsSql} did not.
   */
  void bound(Connection c, long idleMillis) throws SQLException {}

  @Override
  void raiseBounds(Connection c, long horizonMillis) throws SQLException {
    bound(c, horizonMillis); // inside the holding transaction, where the dialect has bounds
  }

  /** Undoes {@link #boundsSql} or {@link #bound} before the connection goes back to the pool. */
  @Override
  void unbound(Connection c) throws SQLException {}

  /** The SQL expression that draws the next fencing token. */
  abstract String nextToken();

  /** The SQL expression of this connection's id on the server. */
  abstract String sessionIdSql();

  /** Inserts the row of a name if missing, in autocommit, never waiting on another's lock. */
  abstract void insertRow(Connection c, String name) throws SQLException;

  /** Whether {@code e} says the row is locked by another transaction. */
  abstract boolean busy(SQLException e);

  /** The condition that the recorded session is alive, on the record aliased {@code h}. */
  abstract String sessionAlive();

  @Override
  List<String> probes() {
    return List.of(
        "SELECT name, lock_key, owner, token, holder, granted_at, expires_at, session_id FROM "
            + held
            + " WHERE 1 = 0",
        "UPDATE " + held + " SET token = token WHERE 1 = 0",
        "SELECT name FROM " + table + "_rows WHERE 1 = 0",
        "UPDATE " + table + "_rows SET name = name WHERE 1 = 0");
  }

  /**
   * Whether inserting the row before locking it never waits (PostgreSQL's {@code ON CONFLICT DO
   * NOTHING} and H2's {@code NOT EXISTS} insert do not; MariaDB's {@code INSERT IGNORE} waits for a
   * shared lock on an existing row).
   */
  boolean insertsWithoutWaiting() {
    return true;
  }

  /** Names whose row this client has seen, so that their first attempt skips the insert. */
  private final java.util.Set<String> knownRows =
      java.util.Collections.newSetFromMap(new java.util.concurrent.ConcurrentHashMap<>());

  private static final int MAX_KNOWN_ROWS = 10_000;

  @Override
  @Nullable Granted lock(
      Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
      throws SQLException {
    if (insertsWithoutWaiting() && !knownRows.contains(name)) {
      // First use of the name by this client: one insert, instead of a failed lock and a retry.
      insertRow(c, name);
      remember(name);
    }
    for (int round = 0; round < 2; round++) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = prepare(c, select)) {
        if (boundsSql().isEmpty()) {
          ps.setString(1, name);
        } else {
          ps.setString(1, Long.toString(idleMillis));
          ps.setString(2, name);
        }
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            remember(name);
            Granted granted = new Granted(rs.getLong(1), rs.getLong(2));
            bound(c, idleMillis);
            return granted; // the transaction stays open
          }
        }
      } catch (SQLException e) {
        if (!busy(e)) {
          throw e;
        }
        try {
          endTransaction(c);
        } catch (SQLException closed) {
          // HikariCP closes a connection after a timeout exception (H2 reports NOWAIT so); it
          // held nothing, and closing it again is a no-op.
        }
        return null;
      }
      if (skipsLocked() && rowExists(c, name)) {
        endTransaction(c);
        return null; // the row was skipped: another transaction holds it
      }
      endTransaction(c);
      insertRow(c, name); // first use of the name: then lock it
    }
    return null;
  }

  private void remember(String name) {
    if (knownRows.size() >= MAX_KNOWN_ROWS) {
      knownRows.clear(); // a cache only: forgetting costs one insert per name
    }
    knownRows.add(name);
  }

  private boolean rowExists(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, exists)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static void endTransaction(Connection c) throws SQLException {
    c.rollback();
    c.setAutoCommit(true);
  }

  @Override
  boolean recordsApart() {
    return true;
  }

  /**
   * Takes over the record of {@code name} unless another grant's record is live, else inserts it if
   * missing. The row lock is already held here: a live record of another grant means that its
   * holder's transaction ended with its session (a restart, a kill) while the holder may still
   * trust its lease. Checked after the row lock, in a statement of its own, so that the record of
   * any grant whose session ended before ours began is seen.
   */
  @Override
  @Nullable Granted record(
      Connection other, String name, String owner, String holder, Granted locked, long leaseMillis)
      throws SQLException {
    Granted granted = drawApart(other, name, locked);
    if (update(
                other,
                takeOver,
                owner,
                granted.token(),
                holder,
                leaseMillis,
                granted.sessionId(),
                name,
                granted.token())
            > 0
        || insertRecord(
            other, name, owner, granted.token(), holder, leaseMillis, granted.sessionId())) {
      return granted;
    }
    return null;
  }

  /**
   * The grant with its fencing token, where the dialect draws it apart from the locking statement
   * (through {@code other}, in autocommit, while the row is locked); as it is where {@link
   * #nextToken()} drew it.
   */
  Granted drawApart(Connection other, String name, Granted locked) throws SQLException {
    return locked;
  }

  /**
   * Inserts the record of {@code name} if it has none, never waiting; false if one exists (then a
   * live one: {@link #record} could not take it over).
   */
  private boolean insertRecord(
      Connection c,
      String name,
      String owner,
      long token,
      String holder,
      long leaseMillis,
      long sessionId)
      throws SQLException {
    try {
      return update(c, insertRecordSql(), name, owner, token, holder, leaseMillis, sessionId) > 0;
    } catch (SQLException e) {
      if ("23505".equals(e.getSQLState())) {
        return false; // a record exists (H2 has no insert that ignores it): a live one
      }
      throw e;
    }
  }

  /**
   * The insert of a record that leaves an existing one alone (0 rows), or fails on it with SQL
   * state 23505; parameters name, owner, token, holder, lease, session id.
   */
  String insertRecordSql() {
    return insertValues();
  }

  /**
   * Moves the record's lease end where the session that holds the row lock is alive, seen from
   * {@code other} ({@link #sessionAlive}): a record whose session ended is not the grant's any more
   * (its lock was freed with it).
   */
  @Override
  boolean renewRecord(Connection other, String name, String owner, long token, long leaseMillis)
      throws SQLException {
    if (!renewalConfirmsSession()) {
      return moveRecord(other, name, owner, token, leaseMillis);
    }
    // A driver that counts changed rows, not matched ones (MariaDB's useAffectedRows), says 0 for
    // a lease end left as it was: asked again, with the same conditions.
    return update(other, renewLiveRecord, leaseMillis, name, owner, token) > 0
        || exists(other, liveRecordHeld, name, token);
  }

  @Override
  boolean renewalConfirmsSession() {
    return true;
  }

  private boolean exists(Connection c, String sql, Object... values) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql)) {
      bind(ps, values);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  @Override
  void unlock(Connection c, String name, String owner, long token) throws SQLException {
    clearRecordInTransaction(c, name, token);
    c.commit();
    c.setAutoCommit(true);
  }

  /** Clears the record inside the holding transaction, so that it ends with the lock. */
  void clearRecordInTransaction(Connection c, String name, long token) throws SQLException {
    clearRecord(c, name, token);
  }

  @Override
  void heartbeat(Connection c, String name, String owner, long token, long leaseMillis)
      throws SQLException {
    // The lock lives as long as the transaction, which lives as long as the connection.
    if (!c.isValid(queryTimeoutSeconds)) {
      throw new SQLException("the connection holding the row lock is closed", "08003");
    }
  }

  @Override
  String inspectSql(boolean exactName) {
    return ("SELECT h.name, h.holder, h.token, 1, h.granted_at, h.expires_at - %2$s, h.session_id"
            + " FROM %1$s h WHERE h.lock_key IS NULL AND h.owner IS NOT NULL AND %3$s AND %4$s"
            + " ORDER BY h.name")
        .formatted(
            held, now, exactName ? "h.name = ?" : "h.name LIKE ? ESCAPE '!'", sessionAlive());
  }
}
