package io.dlock.jdbc;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The SQL of one dialect for lease rows. Every statement is parameterized; the table name, checked
 * by {@link JdbcLockSettings#withTable(String)}, is the only identifier put into the text. Expiry
 * is always computed by the database's clock ({@link #nowMillis()}), never the client's.
 *
 * <p>A subclass per dialect gives the clock expression and the statements that differ; the shared
 * release and renewal statements below work on every dialect.
 */
abstract class LockStatements {
  /** A row is held while {@code expires_at > now}; it is free once its lease ran out. */
  protected final String table;

  protected final int queryTimeoutSeconds;

  private final String releaseLast;
  private final String releaseOne;
  private final String renewOne;
  private final String delete;
  private final String purge;
  private final String probeRead;
  private final String probeWrite;
  private final String inspect;
  private final String describe;
  private final String deleteGrant;

  LockStatements(String table, Duration statementTimeout) {
    this.table = table;
    this.queryTimeoutSeconds = (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
    String now = nowMillis();
    this.releaseLast =
        "DELETE FROM "
            + table
            + " WHERE name = ? AND owner = ? AND token = ? AND holds = 1 AND expires_at > "
            + now;
    this.releaseOne =
        "UPDATE "
            + table
            + " SET holds = holds - 1 WHERE name = ? AND owner = ? AND token = ? AND holds > 1"
            + " AND expires_at > "
            + now;
    // An owner id's lease is never shortened by a renewal, whatever its hold count: other clients
    // holding the same id may count on a longer lease, and the count cannot tell (a renewal sent
    // before its hold's release and answered after it meets a count of 1 that is another
    // client's hold). A grant owner has one holder: its lease is set as asked, so that an
    // extension (Lease.extend, which renews too) may shorten it.
    // Release and renewal match the grant's fencing token too, not only the owner: an owner id can
    // be granted the lock again (a new token) after its earlier grant ended behind its holders'
    // backs, and a late release or renewal of the earlier grant must not reach the newer one.
    this.renewOne =
        "UPDATE "
            + table
            + " SET expires_at = CASE WHEN ? = 1 AND expires_at > "
            + now
            + " + ? THEN expires_at ELSE "
            + now
            + " + ? END WHERE name = ? AND owner = ? AND token = ? AND expires_at > "
            + now;
    this.delete = "DELETE FROM " + table + " WHERE name = ?";
    this.purge = "DELETE FROM " + table + " WHERE expires_at < " + now + " - ?";
    this.probeRead = "SELECT " + probeColumns() + " FROM " + table + " WHERE 1 = 0";
    String columns = "SELECT name, holder, token, holds, granted_at, expires_at - " + now;
    this.inspect =
        columns
            + " FROM "
            + table
            + " WHERE name LIKE ? ESCAPE '!' AND expires_at > "
            + now
            + " ORDER BY name";
    this.describe = columns + " FROM " + table + " WHERE name = ? AND expires_at > " + now;
    // Never a grant whose token is not drawn yet (MySQL's token 0): all such grants look alike.
    this.deleteGrant = "DELETE FROM " + table + " WHERE name = ? AND token = ? AND token <> 0";
    this.probeWrite = "UPDATE " + table + " SET holds = holds WHERE 1 = 0";
  }

  /**
   * The columns of the lease-row table that the start-up probe reads (called by the constructor).
   */
  String probeColumns() {
    return LEASE_ROW_COLUMNS;
  }

  /** The columns every dialect's lease-row table has. */
  static final String LEASE_ROW_COLUMNS =
      "name, owner, holds, token, expires_at, holder, granted_at";

  /** The dialect's name for logs and errors. */
  abstract String dialect();

  /** The SQL expression of the database clock in milliseconds since the epoch, as a BIGINT. */
  abstract String nowMillis();

  /** The DDL resource of this dialect: every table and counter of every mode. */
  abstract String schemaResource();

  /** A statement that uses the fencing counter as acquisition does, to check the privilege. */
  abstract String probeSequence();

  /** The fencing counter, for messages: the sequence {@code <table>_fence} where there is one. */
  String fenceObject() {
    return "the sequence " + table + "_fence";
  }

  /**
   * The fencing counter that the other dialect of this database family would keep for this table
   * (MariaDB's sequence for the MySQL dialect, and the reverse), which must not exist: clients of
   * two dialects on one table would draw tokens from two counters, in no order. Null where there is
   * no other dialect.
   */
  @Nullable String foreignCounter() {
    return null;
  }

  /** The privilege that {@link #probeSequence()} needs. */
  String fencePrivilege() {
    return "USAGE (or SELECT)";
  }

  /**
   * One atomic attempt: insert the row, take over an expired one (new fencing token), or re-enter
   * one's own (same token, expiry never shortened; the hold count grows only if {@code
   * countsHolds}, an owner id: a grant owner asking again is a repeat and adds no hold); otherwise
   * report the holder's remaining lease.
   *
   * @param owner the owner's key, {@link io.dlock.spi.LockOwner#key()}
   */
  abstract AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException;

  /** The unexpired lease rows whose names match the glob, by the database clock. */
  List<LockInfo> inspect(Connection c, String glob) throws SQLException {
    try (PreparedStatement ps = prepare(c, inspect)) {
      ps.setString(1, likePattern(glob));
      try (ResultSet rs = ps.executeQuery()) {
        List<LockInfo> out = new ArrayList<>();
        while (rs.next()) {
          out.add(info(rs, true));
        }
        return out;
      }
    }
  }

  /**
   * Deletes the unexpired row of {@code name} whoever holds it; the holder finds out at its next
   * renewal. Deletes only the grant it read, so a grant made in between is left alone.
   */
  Optional<LockInfo> forceRelease(Connection c, String name) throws SQLException {
    return forceReleaseByToken(c, name);
  }

  /** Deletes the grant that holds {@code name} now, named by its fencing token. */
  final Optional<LockInfo> forceReleaseByToken(Connection c, String name) throws SQLException {
    for (int round = 0; round < 3; round++) {
      LockInfo before;
      try (PreparedStatement ps = prepare(c, describe)) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.empty();
          }
          before = info(rs, true);
        }
      }
      try (PreparedStatement ps = prepare(c, deleteGrant)) {
        ps.setString(1, name);
        ps.setLong(2, before.fencingToken());
        if (ps.executeUpdate() == 1) {
          forcedRelease(c, name);
          return Optional.of(before);
        }
      }
    }
    return Optional.empty();
  }

  /** After a forced release: wakes waiters where the dialect can (PostgreSQL's NOTIFY). */
  void forcedRelease(Connection c, String name) throws SQLException {}

  /** A lock info from columns name, holder, token, holds, granted_at (ms), remaining lease (ms). */
  static LockInfo info(ResultSet rs, boolean withRemaining) throws SQLException {
    long grantedAt = rs.getLong(5);
    boolean hasGrantedAt = !rs.wasNull();
    long remaining = rs.getLong(6);
    boolean hasRemaining = withRemaining && !rs.wasNull();
    String holder = rs.getString(2);
    return new LockInfo(
        rs.getString(1),
        holder == null ? "unknown" : holder,
        rs.getLong(3),
        Math.max(1, rs.getInt(4)),
        hasGrantedAt ? Instant.ofEpochMilli(grantedAt) : null,
        hasRemaining ? Duration.ofMillis(Math.max(0, remaining)) : null);
  }

  /** A glob ({@code *} any characters, {@code ?} one) as a LIKE pattern with escape {@code !}. */
  static String likePattern(String glob) {
    StringBuilder out = new StringBuilder(glob.length() + 8);
    for (int i = 0; i < glob.length(); i++) {
      char ch = glob.charAt(i);
      switch (ch) {
        case '*' -> out.append('%');
        case '?' -> out.append('_');
        case '%', '_', '!' -> out.append('!').append(ch);
        default -> out.append(ch);
      }
    }
    return out.toString();
  }

  /**
   * Deletes the owner's row of the grant {@code token} when this was its last hold, else lowers the
   * hold count. The common case (one hold) is one statement. The loop covers a hold count changed
   * by a concurrent release of the same owner between the two statements.
   */
  ReleaseResult release(Connection c, String name, String owner, long token) throws SQLException {
    for (int round = 0; round < 3; round++) {
      if (update(c, releaseLast, name, owner, token) == 1) {
        return ReleaseResult.RELEASED;
      }
      if (update(c, releaseOne, name, owner, token) == 1) {
        return ReleaseResult.STILL_HELD;
      }
      if (!ownsValid(c, name, owner, token)) {
        return ReleaseResult.NOT_HELD;
      }
    }
    return ReleaseResult.NOT_HELD;
  }

  /** Whether {@code owner} still holds the grant {@code token} of {@code name}, unexpired. */
  boolean ownsValid(Connection c, String name, String owner, long token) throws SQLException {
    try (PreparedStatement ps =
        prepare(
            c,
            "SELECT 1 FROM "
                + table
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > "
                + nowMillis())) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, token);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * Extends every lease of the batch whose grant (owner and fencing token) is still held, in one
   * JDBC batch (one round trip with drivers that pipeline batches): an owner id's to at least the
   * lease from now (never shorter), a grant owner's to exactly that.
   *
   * @return the positions of the leases that are gone
   */
  Set<Integer> renew(Connection c, List<HeldLease> leases) throws SQLException {
    Set<Integer> gone = new HashSet<>();
    try (PreparedStatement ps = prepare(c, renewOne)) {
      for (HeldLease lease : leases) {
        ps.setInt(1, lease.owner().countsHolds() ? 1 : 0);
        ps.setLong(2, lease.lease().toMillis());
        ps.setLong(3, lease.lease().toMillis());
        ps.setString(4, lease.lockName());
        ps.setString(5, lease.owner().key());
        ps.setLong(6, lease.fencingToken());
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      for (int i = 0; i < counts.length; i++) {
        if (counts[i] >= 1) {
          continue;
        }
        // No count (SUCCESS_NO_INFO), or 0: a driver that counts changed rows rather than matched
        // ones (MariaDB's and MySQL's useAffectedRows=true) says 0 for a row the renewal left as it
        // was (a longer lease of the same grant kept). Asked again, so that neither a kept lease
        // is reported lost nor a lost one renewed. A grant unexpired now was unexpired at the
        // renewal too: nothing revives an expired grant (renewal and re-entry need it unexpired,
        // a takeover draws a new token).
        HeldLease lease = leases.get(i);
        if (!ownsValid(c, lease.lockName(), lease.owner().key(), lease.fencingToken())) {
          gone.add(i);
        }
      }
    }
    return gone;
  }

  /** Deletes the row of {@code name} whoever holds it; for operators and tests. */
  int delete(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, delete)) {
      ps.setString(1, name);
      return ps.executeUpdate();
    }
  }

  /** Deletes rows whose lease ran out more than {@code olderThanMillis} ago, by the db clock. */
  int purgeExpired(Connection c, long olderThanMillis) throws SQLException {
    try (PreparedStatement ps = prepare(c, purge)) {
      ps.setLong(1, olderThanMillis);
      return ps.executeUpdate();
    }
  }

  /**
   * Whether the lock table surely does not exist, asked without a failing statement: false where
   * the dialect cannot tell so (then the probe finds out).
   */
  boolean surelyMissing(Connection c) throws SQLException {
    return false;
  }

  /** Reads, writes (no rows) and draws from the sequence, to report a bad setup at start. */
  void probe(Connection c) throws SQLException, SchemaProblem {
    // First: the other dialect's table would also fail the reads below, with a less useful message.
    String foreign = foreignCounter();
    if (foreign != null && tableExists(c, foreign)) {
      throw new SchemaProblem(
          "the lock table '"
              + table
              + "' has "
              + foreign
              + ", the fencing counter of the other MySQL-family dialect, beside "
              + fenceObject()
              + ": clients of two dialects on one table draw tokens from two counters, in no"
              + " order; use one dialect per table (JdbcLockSettings.withDatabase) or a new table",
          null,
          false);
    }
    probeStep(c, probeRead, "read", "SELECT");
    probeStep(c, probeWrite, "update", "SELECT, INSERT, UPDATE, DELETE");
    probeStep(c, probeSequence(), "use " + fenceObject() + " of", fencePrivilege());
  }

  /** Whether {@code name} is a table of the connection's database (MySQL family). */
  final boolean tableExists(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        prepare(
            c,
            "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
                + " AND LOWER(TABLE_NAME) = LOWER(?)")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  void probeStep(Connection c, String sql, String what, String privilege) throws SchemaProblem {
    try (Statement st = c.createStatement()) {
      st.setQueryTimeout(queryTimeoutSeconds);
      st.execute(sql);
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
      if (state.equals("42501")
          || state.equals("42000") && message.contains("denied")
          || message.contains("permission denied")
          || message.contains("not enough rights")) {
        throw new SchemaProblem(
            "the database user may not "
                + what
                + " the lock table '"
                + table
                + "': grant it "
                + privilege
                + " (see docs/jdbc.md), ["
                + e.getMessage()
                + "]",
            e);
      }
      if (state.equals("42P01")
          || state.equals("42S02")
          || state.equals("42S22")
          || message.contains("unknown column")
          || state.equals("42102")
          || state.equals("90036")
          || message.contains("doesn't exist")
          || message.contains("does not exist")
          || message.contains("not found")) {
        throw new SchemaProblem(
            "the lock table '"
                + table
                + "', a table next to it or "
                + fenceObject()
                + " is missing (or lacks a column): create them with the DDL in "
                + schemaResource()
                + " (printed in docs/jdbc.md), or let dlock create them at start with the"
                + " create-schema setting (JdbcLockSettings.withCreateSchema(true); the property"
                + " createSchema=true; dlock.jdbc.create-schema=true in Spring Boot) ["
                + e.getMessage()
                + "]",
            e);
      }
      throw new SchemaProblem(
          "cannot " + what + " the lock table '" + table + "': " + e.getMessage(), e);
    }
  }

  /** A bad setup found at start: says which, and how to fix it. */
  static final class SchemaProblem extends Exception {
    private static final long serialVersionUID = 1L;

    private final boolean creatable;

    SchemaProblem(String message, @Nullable Throwable cause) {
      this(message, cause, true);
    }

    SchemaProblem(String message, @Nullable Throwable cause, boolean creatable) {
      super(message, cause);
      this.creatable = creatable;
    }

    /** Whether creating the schema (createSchema) may fix it; never for a wrong dialect. */
    boolean creatable() {
      return creatable;
    }
  }

  protected PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return prepare(c, sql, queryTimeoutSeconds);
  }

  /** {@code sql} prepared on {@code c}, bounded by the statement timeout. */
  static PreparedStatement prepare(Connection c, String sql, int queryTimeoutSeconds)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    ps.setQueryTimeout(queryTimeoutSeconds);
    return ps;
  }

  private int update(Connection c, String sql, String name, String owner, long token)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, sql)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, token);
      return ps.executeUpdate();
    }
  }
}
