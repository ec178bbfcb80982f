package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * H2's permit statements: a counter row created with {@code MERGE ... WHEN NOT MATCHED}. No release
 * signals.
 */
final class H2PermitStatements extends PermitStatements {
  H2PermitStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
  }

  @Override
  String nowMillis() {
    return H2Dialect.NOW_MILLIS;
  }

  @Override
  String createCounterSql() {
    return "MERGE INTO "
        + semaphores
        + " s USING (VALUES (CAST(? AS VARCHAR(256)))) AS v(name) ON s.name = v.name"
        + " WHEN NOT MATCHED THEN INSERT (name, fence) VALUES (v.name, 0)";
  }

  @Override
  void createCounter(Connection c, String semaphore) throws SQLException {
    try {
      super.createCounter(c, semaphore);
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) {
        throw e;
      }
      // Another client inserted it at the same moment: it exists, which is all this wants.
    }
  }
}
