package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The MySQL family's permit statements, for MySQL 8 and MariaDB alike: a counter row created with
 * {@code INSERT IGNORE}, whose lock also draws the next fence, and the read of the grants a locking
 * one. InnoDB's plain reads in a repeatable-read transaction see the snapshot of the transaction's
 * first plain read; a locking read sees the newest committed rows, as the sum of the permits held
 * must. No release signals.
 */
class MySqlPermitStatements extends PermitStatements {
  private final String drawFence;

  MySqlPermitStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.drawFence =
        "UPDATE " + semaphores + " SET fence = LAST_INSERT_ID(fence + 1) WHERE name = ?";
  }

  @Override
  String nowMillis() {
    return MySqlDialect.NOW_MILLIS;
  }

  @Override
  String createCounterSql() {
    return "INSERT IGNORE INTO " + semaphores + " (name, fence) VALUES (?, 0)";
  }

  /**
   * One locking read of every grant of the semaphore, ended or not (InnoDB locks every row it scans
   * either way), that also counts the ended ones: the acquisition deletes them only when there are
   * any, a round trip saved on most acquisitions. {@code UTC_TIMESTAMP(6)} is the statement's start
   * throughout, so every {@code now} here is the same instant.
   */
  @Override
  String summarySql() {
    String live = "expires_at > " + nowMillis();
    return "SELECT MAX(CASE WHEN owner = ? AND "
        + live
        + " THEN token END), COALESCE(SUM(CASE WHEN "
        + live
        + " THEN permits END), 0), MIN(CASE WHEN "
        + live
        + " THEN expires_at END) - "
        + nowMillis()
        + ", COUNT(*) - COUNT(CASE WHEN "
        + live
        + " THEN 1 END) FROM "
        + permits
        + " WHERE semaphore = ? FOR UPDATE";
  }

  /**
   * Locks the counter row and draws the next fence in one statement: {@code LAST_INSERT_ID(expr)}
   * hands the new value back in the statement's answer (the drivers' generated keys), where a
   * locking read and then the fence's write were two round trips (each a fifth of the lease on the
   * fault suite's slow path). An attempt that grants nothing leaves a gap in the tokens: they only
   * need to increase.
   *
   * @return the fence before this one, as {@link PermitStatements#lockCounter} answers; null if the
   *     row is missing
   */
  @Override
  @Nullable Long lockCounter(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(drawFence, Statement.RETURN_GENERATED_KEYS)) {
      ps.setQueryTimeout(queryTimeoutSeconds);
      ps.setString(1, semaphore);
      if (ps.executeUpdate() == 0) {
        return null;
      }
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (keys.next()) {
          return keys.getLong(1) - 1;
        }
      }
    }
    // A driver (or a wrapper) that hands no generated key back: the session's value, a round trip.
    try (PreparedStatement ps = prepare(c, "SELECT LAST_INSERT_ID()");
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException(
            "no fence drawn for semaphore '"
                + semaphore
                + "': SELECT LAST_INSERT_ID() after the UPDATE of "
                + semaphores
                + " answered no row; check that the data source hands the statements one session"
                + " (no statement-level proxy or load balancer between them)");
      }
      return rs.getLong(1) - 1;
    }
  }

  /**
   * A grant is the fence's draw and then this statement, two round trips under the counter row's
   * lock where the summary, the insert and the commit were three: under the fault suite's {@code
   * delay} (400 ms round trips) the grant after a release came up to 4 s after it, past the bound.
   * The grants are read in a derived table with its own locking clause, which InnoDB needs to lock
   * them in every isolation level (an outer statement's locks do not reach into a subquery).
   */
  @Override
  String grantIfRoomSql() {
    String now = nowMillis();
    return "INSERT INTO "
        + permits
        + " (semaphore, owner, permits, token, expires_at, holder, granted_at) SELECT ?, ?, ?, ?, "
        + now
        + " + ?, ?, "
        + now
        + " FROM (SELECT CASE WHEN COUNT(CASE WHEN owner = ? OR expires_at <= "
        + now
        + " THEN 1 END) > 0 THEN NULL ELSE COALESCE(SUM(permits), 0) END AS held FROM "
        + permits
        + " WHERE semaphore = ? FOR UPDATE) AS grants WHERE grants.held + ? <= ?";
  }

  @Override
  boolean drawsFenceWhenLocked() {
    return true;
  }

  /**
   * The MySQL family has no release signals: waiters poll, and a poll that takes the counter row's
   * lock to be refused holds it for three round trips, while the others queue behind it. Under the
   * fault suite's {@code delay} (400 ms round trips) four polling workers kept a freed semaphore
   * unclaimed for 4 s. A refusal is now this one autocommit read (a consistent read of the last
   * committed grants), and only an attempt that may fit takes the lock; the locked read decides.
   */
  @Override
  String precheckSql() {
    String live = "expires_at > " + nowMillis();
    return "SELECT COUNT(CASE WHEN owner = ? AND "
        + live
        + " THEN 1 END), COALESCE(SUM(CASE WHEN "
        + live
        + " THEN permits END), 0), MIN(CASE WHEN "
        + live
        + " THEN expires_at END) - "
        + nowMillis()
        + ", COUNT(CASE WHEN owner = ? OR NOT ("
        + live
        + ") THEN 1 END) FROM "
        + permits
        + " WHERE semaphore = ?";
  }
}
