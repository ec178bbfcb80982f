package io.dlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The lock tables at {@link JdbcLockBackend#connect}: whether they can be read and written, and
 * their creation from the dialect's DDL when {@link JdbcLockSettings#createSchema()} is on.
 */
final class JdbcSchema {
  private JdbcSchema() {}

  /**
   * Checks that the lease-row table, and the mode's own tables ({@code modeProbes}: the
   * connection-bound mode's, or the lease-row mode's semaphore tables), can be read and written.
   */
  static void probe(Connection c, LockStatements statements, List<String> modeProbes)
      throws LockStatements.SchemaProblem, SQLException {
    statements.probe(c);
    for (String probe : modeProbes) {
      statements.probeStep(c, probe, "use", "SELECT, INSERT, UPDATE, DELETE");
    }
  }

  static void createSchema(Connection c, LockStatements statements)
      throws SQLException, LockStatements.SchemaProblem {
    String resource = statements.schemaResource();
    String ddl = schemaDdl(resource, statements.table);
    try (Statement st = c.createStatement()) {
      st.setQueryTimeout(statements.queryTimeoutSeconds);
      // Comments first: they may contain semicolons.
      for (String sql : stripComments(ddl).split(";")) {
        String trimmed = sql.trim();
        if (trimmed.isBlank()) {
          continue;
        }
        try {
          st.execute(trimmed);
        } catch (SQLException e) {
          String state = String.valueOf(e.getSQLState());
          if (!state.equals("23505") && !state.equals("42P07") && !state.equals("42710")) {
            throw e;
          }
          // Another client created it at the same moment (PostgreSQL's IF NOT EXISTS is not
          // atomic: the loser sees a unique violation, "relation already exists", or "type ...
          // already exists" for the table's row type, SchemaCreationRaceTest): it exists now,
          // which is all this step wants.
        }
      }
    } catch (SQLException e) {
      throw new LockStatements.SchemaProblem(
          "cannot create the lock table '"
              + statements.table
              + "' (createSchema is on): "
              + e.getMessage()
              + "; create it with the DDL in "
              + resource
              + " as a user with DDL rights, and turn createSchema off",
          e);
    }
  }

  /** The DDL of a dialect's schema resource for this table. */
  static String schemaDdl(String resource, String table) {
    try (InputStream in = JdbcLockBackend.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + resource, e);
    }
  }

  private static String stripComments(String sql) {
    StringBuilder out = new StringBuilder();
    for (String line : sql.split("\n")) {
      int comment = line.indexOf("--");
      out.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
    }
    return out.toString().trim();
  }
}
