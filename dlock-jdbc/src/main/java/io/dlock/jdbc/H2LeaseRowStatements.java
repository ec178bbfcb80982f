package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * H2 2.x: acquisition is one {@code MERGE ... USING} read back through {@code FINAL TABLE}; only
 * when another owner holds the lock a second query reads the holder's remaining lease (in process,
 * so the extra call costs no network round trip).
 */
final class H2LeaseRowStatements extends LockStatements {
  private static final String NOW = H2Dialect.NOW_MILLIS;

  private final String acquire;
  private final String remaining;

  H2LeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.acquire =
        """
        SELECT holds, token FROM FINAL TABLE (
          MERGE INTO %1$s l
          USING (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS VARCHAR(160)), CAST(? AS BIGINT),
                         CAST(? AS VARCHAR(200)), CAST(? AS INT)))
                AS s(name, owner, lease, holder, adds)
          ON l.name = s.name
          WHEN MATCHED AND (l.expires_at <= %2$s OR l.owner = s.owner) THEN UPDATE SET
            holds = CASE WHEN l.owner = s.owner AND l.expires_at > %2$s
                         THEN l.holds + s.adds
                         ELSE 1 END,
            token = CASE WHEN l.owner = s.owner AND l.expires_at > %2$s
                         THEN l.token ELSE NEXT VALUE FOR %1$s_fence END,
            owner = s.owner,
            expires_at = CASE WHEN l.owner = s.owner AND l.expires_at > %2$s
                              THEN GREATEST(l.expires_at, %2$s + s.lease) ELSE %2$s + s.lease END,
            holder = CASE WHEN l.owner = s.owner AND l.expires_at > %2$s
                          THEN l.holder ELSE s.holder END,
            granted_at = CASE WHEN l.owner = s.owner AND l.expires_at > %2$s
                              THEN l.granted_at ELSE %2$s END
          WHEN NOT MATCHED THEN INSERT (name, owner, holds, token, expires_at, holder, granted_at)
            VALUES (s.name, s.owner, 1, NEXT VALUE FOR %1$s_fence, %2$s + s.lease, s.holder, %2$s))
        """
            .formatted(table, NOW);
    this.remaining = "SELECT expires_at - " + NOW + " FROM " + table + " WHERE name = ?";
  }

  @Override
  String dialect() {
    return H2Dialect.NAME;
  }

  @Override
  String nowMillis() {
    return NOW;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/h2.sql";
  }

  @Override
  String probeSequence() {
    // Draws one value, as acquisition does (a gap is harmless).
    return "VALUES NEXT VALUE FOR " + table + "_fence";
  }

  @Override
  AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    for (int round = 0; ; round++) {
      try (PreparedStatement ps = prepare(c, acquire)) {
        ps.setString(1, name);
        ps.setString(2, owner);
        ps.setLong(3, leaseMillis);
        ps.setString(4, holder);
        ps.setInt(5, countsHolds ? 1 : 0); // an owner id re-enters, a grant owner repeats
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return new AcquireResult.Granted(rs.getLong(2), rs.getInt(1));
          }
        }
      } catch (SQLException e) {
        // Two inserts of the same name raced. Once more (the winner may have been this owner
        // through another client); then the lock is simply held by the winner.
        if ("23505".equals(e.getSQLState())) {
          if (round == 0) {
            continue;
          }
          return new AcquireResult.Held(Duration.ZERO);
        }
        throw e;
      }
      try (PreparedStatement ps = prepare(c, remaining)) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          return new AcquireResult.Held(
              Duration.ofMillis(rs.next() ? Math.max(0, rs.getLong(1)) : 0));
        }
      }
    }
  }
}
