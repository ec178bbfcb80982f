package io.dlock.idempotency.jdbc;

import io.dlock.idempotency.ClaimAttempt;
import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.IdempotencyStoreException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Dedup records in a table whose primary key is the dedup key. A claim is an {@code INSERT}: the
 * database rejects the second one with a duplicate-key error (SQLState 23505, MySQL error 1062). A
 * failed record, or one whose expiry (by the database's clock) has passed, is taken over by one
 * conditional {@code UPDATE}, which again only one caller can win; otherwise the record is read and
 * reported. Claims and finishes are safe to repeat: the owner's own in-progress claim is claimed
 * again (its timeout restarted), and a finish the owner already made is answered true.
 */
final class JdbcDedupStore implements DedupStore {
  /** Rounds of insert, take-over and read before giving up on a record that keeps changing. */
  private static final int MAX_ROUNDS = 10;

  private final JdbcIdempotency db;
  private final String table;

  JdbcDedupStore(JdbcIdempotency db) {
    this.db = db;
    this.table = db.settings().dedupTable();
  }

  @Override
  public ClaimAttempt tryClaim(
      String key, String fingerprint, String owner, Duration inProgressTimeout) {
    long timeout = inProgressTimeout.toMillis();
    return db.call(
        "claim a dedup record",
        (c, d) -> {
          SQLException last = null;
          for (int round = 0; round < MAX_ROUNDS; round++) {
            try {
              ClaimAttempt attempt = claimOnce(c, d, key, fingerprint, owner, timeout);
              if (attempt != null) {
                return attempt;
              }
            } catch (SQLException e) {
              // A deadlock between two take-overs (MySQL's shared locks of a failed insert): the
              // database undid one statement; another round settles it.
              if (!SqlDialect.isTransientConflict(e)) {
                throw e;
              }
              last = e;
            }
          }
          throw new IdempotencyStoreException(
              "The dedup record " + key + " kept changing during " + MAX_ROUNDS + " claim rounds",
              last);
        });
  }

  /** One round; null when the record changed between the statements. */
  private ClaimAttempt claimOnce(
      java.sql.Connection c,
      SqlDialect d,
      String key,
      String fingerprint,
      String owner,
      long timeout)
      throws SQLException {
    try (PreparedStatement ps =
        db.prepare(
            c,
            "INSERT INTO "
                + table
                + " (dedup_key, record_state, owner_token, fingerprint, result_data, expires_at)"
                + " VALUES (?, 'P', ?, ?, NULL, "
                + d.nowMillis
                + " + ?)")) {
      ps.setString(1, key);
      ps.setString(2, owner);
      ps.setString(3, fingerprint);
      ps.setLong(4, timeout);
      ps.executeUpdate();
      return ClaimAttempt.claimed();
    } catch (SQLException e) {
      if (!SqlDialect.isDuplicateKey(e)) {
        throw e;
      }
    }
    try (PreparedStatement ps =
        db.prepare(
            c,
            "UPDATE "
                + table
                + " SET record_state = 'P', owner_token = ?, fingerprint = ?, result_data = NULL,"
                + " expires_at = "
                + d.nowMillis
                + " + ? WHERE dedup_key = ? AND (record_state = 'F' OR expires_at <= "
                + d.nowMillis
                // The owner's own claim again (its answer was lost): its timeout starts again.
                + " OR (record_state = 'P' AND owner_token = ? AND fingerprint = ?))")) {
      ps.setString(1, owner);
      ps.setString(2, fingerprint);
      ps.setLong(3, timeout);
      ps.setString(4, key);
      ps.setString(5, owner);
      ps.setString(6, fingerprint);
      if (ps.executeUpdate() == 1) {
        return ClaimAttempt.claimed();
      }
    }
    try (PreparedStatement ps =
        db.prepare(
            c,
            "SELECT record_state, fingerprint, result_data, expires_at - "
                + d.nowMillis
                + ", owner_token FROM "
                + table
                + " WHERE dedup_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null; // purged between the statements
        }
        String state = rs.getString(1).trim();
        long remaining = rs.getLong(4);
        if (state.equals("F") || remaining <= 0) {
          return null; // became claimable between the statements
        }
        if (!rs.getString(2).equals(fingerprint)) {
          return ClaimAttempt.fingerprintMismatch();
        }
        if (state.equals("P")) {
          if (owner.equals(rs.getString(5))) {
            // Claimed by this owner after all (MySQL may count an update to equal values as no
            // change): still its claim.
            return ClaimAttempt.claimed();
          }
          return ClaimAttempt.inProgress(Duration.ofMillis(remaining));
        }
        byte[] result = rs.getBytes(3);
        return ClaimAttempt.completed(result == null ? new byte[0] : result);
      }
    }
  }

  @Override
  public boolean complete(String key, String owner, byte[] result, Duration retention) {
    return finish(key, owner, "C", result, retention);
  }

  @Override
  public boolean fail(String key, String owner, Duration retention) {
    return finish(key, owner, "F", null, retention);
  }

  private boolean finish(
      String key, String owner, String state, byte[] result, Duration retention) {
    return db.call(
        "finish a dedup record",
        (c, d) -> {
          try (PreparedStatement ps =
              db.prepare(
                  c,
                  "UPDATE "
                      + table
                      + " SET record_state = ?, result_data = ?, expires_at = "
                      + d.nowMillis
                      + " + ? WHERE dedup_key = ? AND owner_token = ? AND record_state = 'P'")) {
            ps.setString(1, state);
            ps.setBytes(2, result);
            ps.setLong(3, retention.toMillis());
            ps.setString(4, key);
            ps.setString(5, owner);
            if (ps.executeUpdate() == 1) {
              return true;
            }
          }
          // A repeat: the owner already moved the record to this state (the first answer was lost).
          try (PreparedStatement ps =
              db.prepare(
                  c,
                  "SELECT record_state FROM "
                      + table
                      + " WHERE dedup_key = ? AND owner_token = ? AND expires_at > "
                      + d.nowMillis)) {
            ps.setString(1, key);
            ps.setString(2, owner);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getString(1).trim().equals(state);
            }
          }
        });
  }
}
