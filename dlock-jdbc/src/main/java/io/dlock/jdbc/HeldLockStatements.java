package io.dlock.jdbc;

import io.dlock.LockInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The SQL of one dialect for the connection-bound modes ({@link JdbcLockMode#SESSION}, {@link
 * JdbcLockMode#ROW}): the lock lives with one dedicated connection, and the table {@code
 * <table>_held} records each grant (owner, fencing token, holder description, grant time, lease end
 * and the holding connection's id).
 *
 * <p>The database's lock alone cannot exclude a second holder: the server frees it the moment the
 * holding session ends (a restart, a kill, an idle timeout), while the holder trusts its lease
 * until it next hears from the database. So the record is a lease too: its lease end, by the
 * database's clock, is written at the grant and at every renewal (before the client extends its
 * trust), it is cleared at release, and a grant is refused while another grant's record is live
 * ({@link #liveRecord}), even though the database's lock is free. A holder told that its session
 * ended clears its record, so that hand-off waits for the holder to stop trusting, not for its
 * lease. Every statement is parameterized; only the checked table name is put into the text.
 */
abstract class HeldLockStatements {
  protected final String table;
  protected final String held;
  protected final int queryTimeoutSeconds;
  protected final String now;

  HeldLockStatements(String table, Duration statementTimeout, String nowMillis) {
    this.table = table;
    this.held = table + "_held";
    this.queryTimeoutSeconds = (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
    this.now = nowMillis;
  }

  /** A grant on a dedicated connection: its fencing token and the connection's id on the server. */
  record Granted(long token, long sessionId) {}

  /** A held lock as recorded, with the id of the connection that holds it. */
  record Holder(LockInfo info, long sessionId) {}

  /** The mode's name for messages. */
  abstract String mode();

  /**
   * One attempt to take the lock on {@code c}, a connection only this grant uses (autocommit on
   * entry). Returns null if another connection holds it; {@code c} is then back in autocommit with
   * no transaction open. On an exception the caller discards {@code c}, which frees anything taken.
   */
  abstract @Nullable Granted lock(
      Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
      throws SQLException;

  /**
   * Whether the grant must be recorded through another connection (row mode: the holding
   * transaction's writes stay invisible and would not survive its end). Session mode records within
   * {@link #lock}.
   */
  boolean recordsApart() {
    return false;
  }

  /**
   * Whether {@link #renewRecord} confirms on the server that the session holding the lock lives, so
   * that a renewal needs no {@link #heartbeat} on the holding connection: one statement, not two,
   * over a slow path (the holding connection is still kept busy by {@link HeldLockWatch}).
   */
  boolean renewalConfirmsSession() {
    return false;
  }

  /**
   * Records the grant through {@code other}, an autocommit connection; see {@link #recordsApart}.
   *
   * @return the grant as recorded (with its token, where the mode draws it here), or null if
   *     another grant's record is live (its holder may still trust it): the grant must then be
   *     undone
   */
  @Nullable Granted record(
      Connection other, String name, String owner, String holder, Granted locked, long leaseMillis)
      throws SQLException {
    return locked;
  }

  /**
   * Moves the recorded lease end of the grant {@code token} to at least {@code leaseMillis} from
   * now by the database's clock, through {@code other} (see {@link #recordsApart}); where the mode
   * records in {@link #heartbeat}, nothing.
   *
   * @return false if the grant's record is gone (cleared or replaced)
   */
  boolean renewRecord(Connection other, String name, String owner, long token, long leaseMillis)
      throws SQLException {
    return true;
  }

  /**
   * The condition that the record aliased {@code r} is live: its grant is not released and its
   * lease has not ended by the database's clock.
   */
  String liveRecord(String r) {
    // Never NULL (a record without a lease end is not live), so that NOT of it is a condition.
    return r + ".owner IS NOT NULL AND COALESCE(" + r + ".expires_at, 0) > " + now;
  }

  /**
   * Clears the record of the grant {@code token}, through any autocommit connection: once its
   * holder stopped trusting it (released, or told that it is lost), the lock is free for the next
   * grant as soon as the database's own lock is.
   */
  void clearRecord(Connection c, String name, long token) throws SQLException {
    update(c, "UPDATE " + held + " SET owner = NULL WHERE name = ? AND token = ?", name, token);
  }

  /**
   * Moves the recorded lease end of the grant {@code token} to at least {@code leaseMillis} from
   * now by the database's clock, never back: the holds of one grant (an owner id's, each with a
   * lease of its own) share the record, and a shorter one must not cut a longer one's short.
   *
   * @return false if the record is no longer the grant's (cleared or replaced)
   */
  boolean moveRecord(Connection c, String name, String owner, long token, long leaseMillis)
      throws SQLException {
    int updated =
        update(
            c,
            "UPDATE "
                + held
                + " SET expires_at = GREATEST(COALESCE(expires_at, 0), "
                + now
                + " + ?) WHERE name = ? AND owner IS NOT NULL AND owner = ? AND token = ?",
            leaseMillis,
            name,
            owner,
            token);
    // A driver that counts changed rows, not matched ones (MariaDB's useAffectedRows), says 0 for
    // a lease end left as it was: asked again.
    return updated > 0 || recordHeld(c, name, token);
  }

  /** Whether the record of {@code name} is the grant {@code token}'s and not cleared. */
  boolean recordHeld(Connection c, String name, long token) throws SQLException {
    try (PreparedStatement ps =
        prepare(
            c, "SELECT 1 FROM " + held + " WHERE name = ? AND token = ? AND owner IS NOT NULL")) {
      bind(ps, name, token);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * Releases the lock held on {@code c} by the grant {@code token} and clears its record, leaving
   * {@code c} in autocommit with nothing held; wakes waiters where the dialect can. Once this
   * returned, the lock is released, whatever follows.
   */
  abstract void unlock(Connection c, String name, String owner, long token) throws SQLException;

  /**
   * Undoes the session settings of {@link #lock} (and {@link #raiseBounds}), after {@link #unlock},
   * so that {@code c} can go back to the pool as it came.
   */
  void unbound(Connection c) throws SQLException {}

  /**
   * Confirms that {@code c} is alive, and so is its lock (the database frees it only with the
   * connection); moves the recorded lease end to {@code leaseMillis} from now where the mode
   * records on {@code c} (session mode). Throws if the connection is dead or the record is no
   * longer the grant's.
   */
  abstract void heartbeat(Connection c, String name, String owner, long token, long leaseMillis)
      throws SQLException;

  /** The locks held now whose names match the LIKE pattern (escape {@code !}). */
  List<LockInfo> inspect(Connection c, String likePattern) throws SQLException {
    List<LockInfo> out = new ArrayList<>();
    try (PreparedStatement ps = prepare(c, inspectSql(false))) {
      ps.setString(1, likePattern);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(LockStatements.info(rs, reportsRemaining()));
        }
      }
    }
    return out;
  }

  /** The holder of {@code name} now, if any. */
  Optional<Holder> holderOf(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, inspectSql(true))) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Holder(LockStatements.info(rs, reportsRemaining()), rs.getLong(7)));
      }
    }
  }

  /**
   * A query of the columns name, holder, token, holds, granted_at, remaining, session_id of the
   * locks held now, by name pattern or (exact) by name.
   */
  abstract String inspectSql(boolean exactName);

  /** Whether the recorded lease end is kept up to date (session mode) or only set at grant. */
  boolean reportsRemaining() {
    return true;
  }

  /**
   * Ends the connection {@code sessionId} that holds {@code name} and returns once the database has
   * freed the lock (or the statement timeout passed).
   */
  abstract void endSession(Connection admin, String name, long sessionId) throws SQLException;

  /** Statements that check at start that the mode's tables can be used. */
  abstract List<String> probes();

  /**
   * Raises the server's bounds on the holding session of {@code c} to {@code horizonMillis} (see
   * {@link #serverBound}), when a re-entry brings a longer lease than the grant's bounds cover. The
   * bounds are never lowered while the grant lives.
   */
  abstract void raiseBounds(Connection c, long horizonMillis) throws SQLException;

  protected PreparedStatement prepare(Connection c, String sql) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    ps.setQueryTimeout(queryTimeoutSeconds);
    return ps;
  }

  protected static void bind(PreparedStatement ps, Object... values) throws SQLException {
    for (int i = 0; i < values.length; i++) {
      Object v = values[i];
      if (v instanceof String s) {
        ps.setString(i + 1, s);
      } else if (v instanceof Long l) {
        ps.setLong(i + 1, l);
      } else if (v instanceof Integer n) {
        ps.setInt(i + 1, n);
      } else {
        throw new IllegalArgumentException("unsupported parameter type " + v);
      }
    }
  }

  protected int update(Connection c, String sql, Object... values) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql)) {
      bind(ps, values);
      return ps.executeUpdate();
    }
  }

  protected void execute(Connection c, String sql, Object... values) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql)) {
      bind(ps, values);
      ps.execute();
    }
  }
}
