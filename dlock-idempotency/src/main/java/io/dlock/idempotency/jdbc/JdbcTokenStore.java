package io.dlock.idempotency.jdbc;

import io.dlock.idempotency.IssuedToken;
import io.dlock.idempotency.TokenConsumption;
import io.dlock.idempotency.TokenStore;
import io.dlock.idempotency.Tokens;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Objects;

/**
 * One-time tokens in a table keyed by the token's SHA-256. Consuming is one conditional {@code
 * UPDATE ... SET consumed_at = now WHERE token_hash = ? AND consumed_at IS NULL AND expires_at >
 * now}: the database lets exactly one of concurrent consumers change the row, and its update count
 * says who. A consumed row stays as a tombstone until the retention has passed (then {@link
 * JdbcIdempotency#purgeExpired()} may delete it), with the hash of the consuming request's id in
 * {@code consumed_by}, so that the same request asking again is told it consumed the token. All
 * times are the database's clock.
 */
final class JdbcTokenStore implements TokenStore {
  private final JdbcIdempotency db;
  private final String table;
  private final long retentionMillis;

  JdbcTokenStore(JdbcIdempotency db) {
    this.db = db;
    this.table = db.settings().tokensTable();
    this.retentionMillis = db.settings().tokenRetention().toMillis();
  }

  @Override
  public IssuedToken issue(Duration timeToLive) {
    Tokens.checkTimeToLive(timeToLive);
    String token = Tokens.newToken();
    long ttl = timeToLive.toMillis();
    db.call(
        "issue a token",
        (c, d) -> {
          try (PreparedStatement ps =
              db.prepare(
                  c,
                  "INSERT INTO "
                      + table
                      + " (token_hash, expires_at, consumed_at, forget_at) VALUES (?, "
                      + d.nowMillis
                      + " + ?, NULL, "
                      + d.nowMillis
                      + " + ?)")) {
            ps.setString(1, Tokens.sha256Hex(token));
            ps.setLong(2, ttl);
            ps.setLong(3, ttl + retentionMillis);
            return ps.executeUpdate();
          }
        });
    return new IssuedToken(token, timeToLive);
  }

  @Override
  public TokenConsumption consume(String token, String requestId) {
    Objects.requireNonNull(token, "token");
    String request = Tokens.requestIdHash(requestId);
    String hash = Tokens.sha256Hex(token);
    return db.call(
        "consume a token",
        (c, d) -> {
          try (PreparedStatement ps =
              db.prepare(
                  c,
                  "UPDATE "
                      + table
                      + " SET consumed_at = "
                      + d.nowMillis
                      + ", forget_at = "
                      + d.nowMillis
                      + " + ?, consumed_by = ?"
                      + " WHERE token_hash = ? AND consumed_at IS NULL AND expires_at > "
                      + d.nowMillis)) {
            ps.setLong(1, retentionMillis);
            ps.setString(2, request);
            ps.setString(3, hash);
            if (ps.executeUpdate() == 1) {
              return TokenConsumption.CONSUMED;
            }
          }
          // Not consumed now: say why, from the row as it is. The request that consumed the token
          // asking again (its answer was lost) is told it consumed it.
          try (PreparedStatement ps =
              db.prepare(
                  c,
                  "SELECT consumed_at, forget_at - "
                      + d.nowMillis
                      + ", consumed_by FROM "
                      + table
                      + " WHERE token_hash = ?")) {
            ps.setString(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next() || rs.getLong(2) <= 0) {
                return TokenConsumption.UNKNOWN;
              }
              rs.getLong(1);
              if (rs.wasNull()) {
                return TokenConsumption.EXPIRED;
              }
              return request.equals(rs.getString(3))
                  ? TokenConsumption.CONSUMED
                  : TokenConsumption.ALREADY_CONSUMED;
            }
          }
        });
  }
}
