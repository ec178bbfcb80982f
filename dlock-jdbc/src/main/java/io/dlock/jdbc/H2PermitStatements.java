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

  /**
   * H2's {@code CURRENT_TIMESTAMP} is that of the statement that first read it in a transaction
   * that has written (found by review: {@code PermitLeaseStartTest}): the acquisition's delete of
   * ended grants, two round trips before its insert.
   */
  @Override
  boolean clockFixedInTransaction() {
    return true;
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
