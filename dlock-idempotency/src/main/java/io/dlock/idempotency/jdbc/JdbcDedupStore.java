package io.dlock.idempotency.jdbc;

import io.dlock.idempotency.ClaimAttempt;
import io.dlock.idempotency.ClaimOwner;
import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.IdempotencyStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Dedup records in a table whose primary key is the dedup key. A claim is an {@code INSERT}: the
 * database rejects the second one with a duplicate-key error (SQLState 23505, MySQL error 1062). A
 * failed record, or one whose expiry (by the database's clock) has passed, is taken over by one
 * conditional {@code UPDATE}, which again only one caller can win; otherwise the record is read and
 * reported. Claims and finishes are safe to repeat: the same attempt's claim is claimed again (its
 * timeout restarted), another attempt of the same request takes it over only while {@code
 * claim_confirmed = 0}, and a finish the owner already made is answered true. The owner is kept as
 * {@code owner_token} (the request) and {@code claim_attempt}.
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
    ClaimOwner claimant = ClaimOwner.parse(owner);
    if (claimant.confirmation()) {
      return db.call("confirm a dedup claim", (c, d) -> confirmOnce(c, d, key, claimant));
    }
    long timeout = inProgressTimeout.toMillis();
    return db.call(
        "claim a dedup record",
        (c, d) -> {
          SQLException last = null;
          for (int round = 0; round < MAX_ROUNDS; round++) {
            try {
              ClaimAttempt attempt = claimOnce(c, d, key, fingerprint, claimant, timeout);
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
      Connection c, SqlDialect d, String key, String fingerprint, ClaimOwner owner, long timeout)
      throws SQLException {
    // A claim without an attempt is confirmed when made; an attempt's claim once it confirms.
    int confirmedWhenMade = owner.needsConfirmation() ? 0 : 1;
    try (PreparedStatement ps =
        db.prepare(
            c,
            "INSERT INTO "
                + table
                + " (dedup_key, record_state, owner_token, fingerprint, result_data, expires_at,"
                + " claim_attempt, claim_confirmed) VALUES (?, 'P', ?, ?, NULL, "
                + d.nowMillis
                + " + ?, ?, ?)")) {
      ps.setString(1, key);
      ps.setString(2, owner.request());
      ps.setString(3, fingerprint);
      ps.setLong(4, timeout);
      ps.setString(5, owner.attempt());
      ps.setInt(6, confirmedWhenMade);
      ps.executeUpdate();
      return ClaimAttempt.claimed();
    } catch (SQLException e) {
      if (!SqlDialect.isDuplicateKey(e)) {
        throw e;
      }
    }
    String sameAttempt =
        "record_state = 'P' AND owner_token = ? AND COALESCE(claim_attempt, '') = ?";
    try (PreparedStatement ps =
        db.prepare(
            c,
            "UPDATE "
                + table
                // claim_confirmed first: MySQL evaluates the assignments left to right, and the
                // CASE must see the row as it was. The same attempt again (a re-send) keeps its
                // confirmation; a take-over starts unconfirmed.
                + " SET claim_confirmed = CASE WHEN "
                + sameAttempt
                + " AND expires_at > "
                + d.nowMillis
                + " THEN claim_confirmed ELSE ? END,"
                + " record_state = 'P', owner_token = ?, fingerprint = ?, result_data = NULL,"
                + " claim_attempt = ?, expires_at = "
                + d.nowMillis
                + " + ? WHERE dedup_key = ? AND (record_state = 'F' OR expires_at <= "
                + d.nowMillis
                // The request's own claim again: the same attempt (its answer was lost, or the
                // command was sent twice), or another attempt while no attempt has confirmed it
                // (none was told of it). A confirmed claim's attempt may be doing the work.
                + " OR (record_state = 'P' AND owner_token = ? AND fingerprint = ?"
                + " AND (COALESCE(claim_attempt, '') = ? OR claim_confirmed = 0)))")) {
      int i = 0;
      ps.setString(++i, owner.request());
      ps.setString(++i, owner.attempt());
      ps.setInt(++i, confirmedWhenMade);
      ps.setString(++i, owner.request());
      ps.setString(++i, fingerprint);
      ps.setString(++i, owner.attempt());
      ps.setLong(++i, timeout);
      ps.setString(++i, key);
      ps.setString(++i, owner.request());
      ps.setString(++i, fingerprint);
      ps.setString(++i, owner.attempt());
      if (ps.executeUpdate() == 1) {
        return ClaimAttempt.claimed();
      }
    }
    try (PreparedStatement ps =
        db.prepare(
            c,
            "SELECT record_state, fingerprint, result_data, expires_at - "
                + d.nowMillis
                + ", owner_token, COALESCE(claim_attempt, '') FROM "
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
          if (owner.request().equals(rs.getString(5)) && owner.attempt().equals(rs.getString(6))) {
            // Claimed by this attempt after all (MySQL may count an update to equal values as no
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

  /** Confirms the attempt's in-progress claim: a compare-and-set on key, request and attempt. */
  private ClaimAttempt confirmOnce(Connection c, SqlDialect d, String key, ClaimOwner owner)
      throws SQLException {
    try (PreparedStatement ps =
        db.prepare(
            c,
            "UPDATE "
                + table
                + " SET claim_confirmed = 1 WHERE dedup_key = ? AND record_state = 'P'"
                + " AND owner_token = ? AND claim_attempt = ? AND expires_at > "
                + d.nowMillis)) {
      ps.setString(1, key);
      ps.setString(2, owner.request());
      ps.setString(3, owner.attempt());
      if (ps.executeUpdate() == 1) {
        return ClaimAttempt.claimed();
      }
    }
    try (PreparedStatement ps =
        db.prepare(
            c,
            "SELECT record_state, owner_token, claim_attempt, claim_confirmed, expires_at - "
                + d.nowMillis
                + " FROM "
                + table
                + " WHERE dedup_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return ClaimAttempt.inProgress(Duration.ZERO); // expired and purged: not this claim
        }
        long remaining = rs.getLong(5);
        if (!rs.getString(1).trim().equals("P") || remaining <= 0) {
          return ClaimAttempt.inProgress(Duration.ZERO);
        }
        if (owner.request().equals(rs.getString(2))
            && owner.attempt().equals(rs.getString(3))
            && rs.getInt(4) == 1) {
          return ClaimAttempt.claimed(); // confirmed before (a repeat, or MySQL's no-change count)
        }
        return ClaimAttempt.inProgress(Duration.ofMillis(remaining));
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
    ClaimOwner finisher = ClaimOwner.parse(owner);
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
                      + " + ? WHERE dedup_key = ? AND owner_token = ?"
                      + " AND COALESCE(claim_attempt, '') = ? AND record_state = 'P'")) {
            ps.setString(1, state);
            ps.setBytes(2, result);
            ps.setLong(3, retention.toMillis());
            ps.setString(4, key);
            ps.setString(5, finisher.request());
            ps.setString(6, finisher.attempt());
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
                      + " WHERE dedup_key = ? AND owner_token = ?"
                      + " AND COALESCE(claim_attempt, '') = ? AND expires_at > "
                      + d.nowMillis)) {
            ps.setString(1, key);
            ps.setString(2, finisher.request());
            ps.setString(3, finisher.attempt());
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getString(1).trim().equals(state);
            }
          }
        });
  }
}
