package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;

/**
 * The session that holds a lock in session or row mode, seen and ended from outside, as an
 * administrator or the server itself would (PostgreSQL and MariaDB).
 */
final class HeldSessions {
  private HeldSessions() {}

  static long idOf(String url, String name) throws SQLException {
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT session_id FROM " + TestDatabases.TABLE + "_held WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the grant of %s is recorded", name).isTrue();
        return rs.getLong(1);
      }
    }
  }

  /** Ends the session on the server and waits until it is gone (so its locks are free). */
  static void end(String url, long sessionId) throws SQLException {
    boolean postgres = url.startsWith("jdbc:postgresql:");
    try (Connection c = DriverManager.getConnection(url)) {
      try (PreparedStatement ps =
          c.prepareStatement(
              postgres ? "SELECT pg_terminate_backend(?::int, 10000)" : "KILL CONNECTION ?")) {
        ps.setLong(1, sessionId);
        ps.execute();
      }
      if (!postgres) {
        awaitGone(c, sessionId);
      }
    }
  }

  private static void awaitGone(Connection c, long sessionId) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() - deadline < 0) {
      try (PreparedStatement ps =
          c.prepareStatement("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?")) {
        ps.setLong(1, sessionId);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return;
          }
        }
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("session " + sessionId + " did not end within 10 s");
  }
}
