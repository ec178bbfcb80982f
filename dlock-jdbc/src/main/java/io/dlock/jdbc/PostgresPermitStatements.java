package io.dlock.jdbc;

import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL's permit statements: a counter row created with {@code ON CONFLICT DO NOTHING}, and
 * releases announced with {@code NOTIFY} on the lock table's channel, the release and its signal in
 * one statement (delivered at commit). The payload is the semaphore's name behind a control
 * character that no lock name may contain, so the listener of a lock and of a semaphore of one name
 * never hear each other's releases.
 *
 * <p>Why every release notifies (a lock's release notifies only when its row saw a waiter):
 * PostgreSQL serializes the commits of all notifying transactions, which costs throughput under
 * many uncontended releases; but a flag shared by the holders of several permits would have to be
 * read under the counter row's lock to be safe, making each release wait for the acquisitions in
 * flight. Semaphore releases are rarer than lock releases; measure before adding the flag.
 */
final class PostgresPermitStatements extends PermitStatements {
  private static final char MARK = '\u0001';

  private final String channel;
  private final String releaseAndSignal;
  private final String lockCounterBounded;

  PostgresPermitStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.channel = PostgresDialect.channel(table);
    this.lockCounterBounded =
        "SELECT fence, set_config('idle_in_transaction_session_timeout', ?, true) FROM "
            + semaphores
            + " WHERE name = ? FOR UPDATE";
    this.releaseAndSignal =
        """
        WITH d AS (DELETE FROM %1$s WHERE semaphore = ? AND owner = ? AND token = ?
                    AND expires_at > %2$s RETURNING 1),
        s AS (SELECT pg_notify(?, ?) FROM (SELECT 1 FROM d LIMIT 1) one)
        SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM s)
        """
            .formatted(permits, nowMillis());
  }

  /** The NOTIFY payload of a release of {@code semaphore}'s permits. */
  static String payload(String semaphore) {
    return MARK + semaphore;
  }

  /** The semaphore a NOTIFY payload names, or null if it names a lock. */
  static @Nullable String semaphoreOf(String payload) {
    return !payload.isEmpty() && payload.charAt(0) == MARK ? payload.substring(1) : null;
  }

  @Override
  String nowMillis() {
    return PostgresDialect.NOW_MILLIS;
  }

  /**
   * A locking read (PostgreSQL refuses {@code FOR UPDATE} beside an aggregate, so in a subquery): a
   * plain read sees the last committed version of a row whose renewal is still uncommitted, which
   * may have ended (found by review: {@code PermitRenewalRaceTest}). The lease end is judged
   * outside the subquery, on the rows as locked: {@code OFFSET 0} keeps the planner from pushing
   * that condition into the scan below the lock (it does, even with {@code clock_timestamp()}),
   * where the old version would be dropped before the lock waits for the new one. Every grant of
   * the semaphore, ended or not, is locked, in the order of the owner keys, the order {@link
   * LeaseRowPermits#renew} sends a batch in (pgjdbc runs a batch in autocommit as one transaction):
   * the two never wait for each other in a cycle.
   */
  @Override
  String liveGrants() {
    return "(SELECT owner, token, permits, expires_at FROM "
        + permits
        + " WHERE semaphore = ? ORDER BY owner COLLATE \"C\" OFFSET 0 FOR UPDATE) g"
        + " WHERE expires_at > "
        + nowMillis();
  }

  /**
   * Also bounds, on the server, how long this transaction may idle between two statements: half the
   * statement timeout, so that an acquirer waiting for the counter row (at most the statement
   * timeout) outlasts it. An acquirer that goes silent while it holds the row (a frozen process, a
   * cut network) is otherwise kept by the server until TCP keepalive gives up, hours, and with it
   * the row and the grants' row locks: every acquisition and renewal of the semaphore would fail
   * (found by review: {@code PermitSilentAcquirerTest}). A {@code SET LOCAL}: it ends with the
   * transaction, so the pooled connection keeps its own setting.
   */
  @Override
  @Nullable Long lockCounter(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps = prepare(c, lockCounterBounded)) {
      ps.setString(1, Long.toString(Math.max(1, statementTimeoutMillis / 2)));
      ps.setString(2, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  String createCounterSql() {
    return "INSERT INTO "
        + semaphores
        + " (name, fence) VALUES (?, 0) ON CONFLICT (name) DO NOTHING";
  }

  @Override
  void signal(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps = prepare(c, "SELECT pg_notify(?, ?)")) {
      ps.setString(1, channel);
      ps.setString(2, payload(semaphore));
      ps.execute();
    }
  }

  /** One round trip: the delete and, if it deleted the grant, its NOTIFY. */
  @Override
  ReleaseResult release(Connection c, String semaphore, String owner, long token)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, releaseAndSignal)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setLong(3, token);
      ps.setString(4, channel);
      ps.setString(5, payload(semaphore));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getLong(1) == 1 ? ReleaseResult.RELEASED : ReleaseResult.NOT_HELD;
      }
    }
  }
}
