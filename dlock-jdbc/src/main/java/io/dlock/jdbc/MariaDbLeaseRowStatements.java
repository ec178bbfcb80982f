package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * MariaDB 10.5+: the MySQL family's lease rows ({@link MySqlLeaseRowStatements}: one autocommit
 * upsert, then for a new grant the token's draw and its write; release and renewal), with tokens
 * from a sequence, where MySQL needs counter rows.
 *
 * <p>Why MariaDB no longer has an acquisition of its own: it was a transaction (autocommit off, an
 * upsert with {@code RETURNING}, for a new row a draw under the insert's lock, the commit), four
 * round trips to a new grant. At 200 ms each way (the fault suite's {@code delay}) with a 2 s lease
 * most grants arrived after their lease and were undone, and a lock stayed free for 3.9 s while a
 * worker waited. The MySQL family's autocommit upsert takes three, and one to a refusal.
 */
final class MariaDbLeaseRowStatements extends MySqlLeaseRowStatements {
  private final String nextToken;

  MariaDbLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.nextToken = "SELECT NEXTVAL(" + table + "_fence)";
  }

  /** From the sequence: one statement, never rolled back, never repeated. */
  @Override
  long draw(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, nextToken);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next() || rs.getLong(1) <= 0) {
        throw new SQLException("the sequence " + table + "_fence returned no value");
      }
      return rs.getLong(1);
    }
  }

  @Override
  String dialect() {
    return MariaDbDialect.NAME;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/mariadb.sql";
  }

  @Override
  String probeSequence() {
    // Draws one value, as acquisition does, so the same privilege is checked (a gap is harmless).
    return nextToken;
  }

  @Override
  String fenceObject() {
    return "the sequence " + table + "_fence";
  }

  @Override
  String fencePrivilege() {
    return "USAGE (or SELECT)";
  }

  @Override
  String foreignCounter() {
    return MySqlFences.tableOf(table); // the MySQL dialect's counter rows
  }
}
