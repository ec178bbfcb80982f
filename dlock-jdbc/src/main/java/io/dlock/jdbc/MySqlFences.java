package io.dlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.zip.CRC32;

/**
 * The fencing counters of the MySQL dialect. MySQL has no sequences, so tokens come from {@value
 * #SLOTS} counter rows in {@code <table>_fences}, one per slot: a name's slot is the low bits of
 * the CRC-32 of its UTF-8 bytes. A draw is one statement, {@code UPDATE ... SET v =
 * LAST_INSERT_ID(v + 1)}: the row lock orders concurrent draws of a slot, and the server sends the
 * new value back with the update's answer (JDBC's generated keys), so a draw is one round trip.
 *
 * <p>Why tokens never repeat for a name: counter rows are never deleted (lock rows are; a counter
 * per lock row would start again after a deletion), and every caller draws while it holds the
 * name's grant (the lease row taken and unexpired, the {@code GET_LOCK}, the locked row), so the
 * draws of one name are ordered as its grants are. Every mode draws in autocommit, one statement:
 * the counter row is locked only while that statement runs, so a client that stalls anywhere holds
 * up no other name of its slot, and a holder whose transaction rolls back with its session cannot
 * hand its token to the next holder. The schema creates all the slots' rows; one missing (a schema
 * made by hand) is created at its first draw. Names sharing a slot share its counter: their tokens
 * increase together, with gaps.
 */
final class MySqlFences {
  /** The number of counter rows: bounded, and few names share one under load. */
  static final int SLOTS = 1024;

  private final String draw;
  private final String seed;
  private final int queryTimeoutSeconds;

  MySqlFences(String table, int queryTimeoutSeconds) {
    this.draw = "UPDATE " + table + "_fences SET v = LAST_INSERT_ID(v + 1) WHERE slot = ?";
    this.seed = "INSERT IGNORE INTO " + table + "_fences (slot, v) VALUES (?, 0)";
    this.queryTimeoutSeconds = queryTimeoutSeconds;
  }

  /** The counter table's name, for messages. */
  static String tableOf(String table) {
    return table + "_fences";
  }

  /** The slot of {@code name}: the low bits of the CRC-32 of its UTF-8 bytes. */
  static int slot(String name) {
    CRC32 crc = new CRC32();
    crc.update(name.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() & (SLOTS - 1));
  }

  /**
   * Draws the next token of {@code name}'s slot on {@code c}, in autocommit; 0 if the slot's row
   * does not exist yet (then {@link #createSlot}, and draw again).
   */
  private long draw(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(draw, Statement.RETURN_GENERATED_KEYS)) {
      ps.setQueryTimeout(queryTimeoutSeconds);
      ps.setInt(1, slot(name));
      if (ps.executeUpdate() != 1) {
        return 0;
      }
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (keys.next() && keys.getLong(1) > 0) {
          return keys.getLong(1);
        }
      }
    }
    // A driver that did not pass the value on: the session remembers it.
    try (PreparedStatement ps = c.prepareStatement("SELECT LAST_INSERT_ID()")) {
      ps.setQueryTimeout(queryTimeoutSeconds);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getLong(1) > 0) {
          return rs.getLong(1);
        }
      }
    }
    throw new SQLException("the fencing counter of '" + name + "' returned no value");
  }

  /**
   * Creates the counter row of {@code name}'s slot if it is missing, in autocommit on {@code c}. In
   * its own statement, never after a draw in one transaction: two transactions whose draws both
   * found the row missing would hold gap locks that each one's insert waits for (a deadlock).
   */
  private void createSlot(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(seed)) {
      ps.setQueryTimeout(queryTimeoutSeconds);
      ps.setInt(1, slot(name));
      ps.executeUpdate();
    }
  }

  /** Draws on {@code c}, in autocommit, creating the slot's row first if it is missing. */
  long drawCommitted(Connection c, String name) throws SQLException {
    long token = draw(c, name);
    if (token == 0) {
      createSlot(c, name);
      token = draw(c, name);
    }
    if (token == 0) {
      throw new SQLException(
          "the fencing counter row of '" + name + "' is missing after its insert", "42S02");
    }
    return token;
  }
}
