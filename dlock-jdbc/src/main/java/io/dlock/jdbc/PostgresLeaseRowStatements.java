package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.ReleaseResult;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * PostgreSQL: every primitive is one statement, so one round trip. Acquisition is {@code INSERT ...
 * ON CONFLICT DO UPDATE ... WHERE} with the holder's remaining lease read in the same statement;
 * release deletes or decrements and, when an acquisition found the lock held since its grant (the
 * {@code waiters} flag, set by that acquisition's statement), sends {@code NOTIFY} in the same
 * statement (delivered at commit); renewal updates a whole batch through {@code unnest} of arrays.
 *
 * <p>Why the flag: PostgreSQL serializes the commits of all transactions that notified (one lock on
 * the notification queue, held through the commit's flush), so a release that notified every time
 * let one uncontended release commit at a time, whatever the pool size.
 */
final class PostgresLeaseRowStatements extends LockStatements {
  private static final String NOW = PostgresDialect.NOW_MILLIS;

  private final String acquire;
  private final String release;
  private final String renew;
  private final String channel;
  private final int tableKey;

  PostgresLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.channel = PostgresDialect.channel(table);
    this.tableKey = firstInt(SessionLockStatements.sha256("dlock-order:" + table));
    // Fencing order: the statement first takes a transaction lock of the name (held until its
    // commit, so for microseconds), and only then draws the token. Without it, the INSERT draws
    // nextval() when it builds its row, before it wins the name: an insert delayed after drawing
    // (waiting on a row lock, or descheduled) could be granted after a later draw already was,
    // and tokens would go 11 then 10. Serialized so, each grant draws after the previous grant of
    // the name committed, hence strictly later from the sequence.
    // Waiters flag: a row held by another owner and not yet flagged is updated too, only to set
    // the flag (every other column kept), so the flag lands on the row version ON CONFLICT locked,
    // the newest. A separate UPDATE would see the statement's snapshot, taken before the wait for
    // the transaction lock: a row deleted and inserted again meanwhile (released, granted anew)
    // would be missed, and the new holder's release would wake nobody (found in review).
    this.acquire =
        """
        WITH g AS MATERIALIZED (SELECT pg_advisory_xact_lock(?, ?) AS locked),
        n AS MATERIALIZED (SELECT %2$s AS now_ms FROM g),
        up AS (
          INSERT INTO %1$s AS l (name, owner, holds, token, expires_at, holder, granted_at,
                                 waiters)
          SELECT ?, ?, 1, nextval('%1$s_fence'), n.now_ms + ?, ?, n.now_ms, FALSE FROM n
          ON CONFLICT (name) DO UPDATE SET
            holds = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > (SELECT now_ms FROM n)
                         THEN l.holds + CAST(? AS INTEGER)
                         WHEN l.expires_at <= (SELECT now_ms FROM n) THEN 1
                         ELSE l.holds END,
            token = CASE WHEN l.expires_at <= (SELECT now_ms FROM n) THEN EXCLUDED.token
                         ELSE l.token END,
            owner = CASE WHEN l.expires_at <= (SELECT now_ms FROM n) THEN EXCLUDED.owner
                         ELSE l.owner END,
            expires_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > (SELECT now_ms FROM n)
                              THEN GREATEST(l.expires_at, EXCLUDED.expires_at)
                              WHEN l.expires_at <= (SELECT now_ms FROM n) THEN EXCLUDED.expires_at
                              ELSE l.expires_at END,
            holder = CASE WHEN l.expires_at <= (SELECT now_ms FROM n) THEN EXCLUDED.holder
                          ELSE l.holder END,
            granted_at = CASE WHEN l.expires_at <= (SELECT now_ms FROM n) THEN EXCLUDED.granted_at
                              ELSE l.granted_at END,
            waiters = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > (SELECT now_ms FROM n)
                           THEN l.waiters
                           WHEN l.expires_at <= (SELECT now_ms FROM n) THEN FALSE
                           ELSE TRUE END
          WHERE l.expires_at <= (SELECT now_ms FROM n) OR l.owner = EXCLUDED.owner
                OR NOT l.waiters
          RETURNING l.owner, l.token, l.holds, l.expires_at)
        SELECT owner = ?, token, holds, expires_at - (SELECT now_ms FROM n) FROM up
        UNION ALL
        SELECT FALSE, token, holds, expires_at - (SELECT now_ms FROM n) FROM %1$s
         WHERE name = ? AND NOT EXISTS (SELECT 1 FROM up)
        """
            .formatted(table, NOW);
    this.release =
        """
        WITH n AS (SELECT %2$s AS now_ms),
        d AS (DELETE FROM %1$s WHERE name = ? AND owner = ? AND token = ? AND holds = 1
               AND expires_at > (SELECT now_ms FROM n) RETURNING 0 AS holds, waiters),
        u AS (UPDATE %1$s SET holds = holds - 1 WHERE name = ? AND owner = ? AND token = ?
               AND holds > 1 AND expires_at > (SELECT now_ms FROM n) RETURNING holds),
        s AS (SELECT pg_notify(?, ?) FROM d WHERE d.waiters)
        SELECT holds, (SELECT count(*) FROM s) FROM d
        UNION ALL
        SELECT holds, 0 FROM u
        """
            .formatted(table, NOW);
    this.renew =
        """
        WITH n AS (SELECT %2$s AS now_ms)
        UPDATE %1$s AS l SET expires_at = CASE
                 WHEN v.shared THEN GREATEST(l.expires_at, (SELECT now_ms FROM n) + v.lease)
                 ELSE (SELECT now_ms FROM n) + v.lease END
          FROM unnest(?::varchar[], ?::varchar[], ?::bigint[], ?::bigint[], ?::boolean[])
               AS v(name, owner, token, lease, shared)
         WHERE l.name = v.name AND l.owner = v.owner AND l.token = v.token
           AND l.expires_at > (SELECT now_ms FROM n)
        RETURNING l.name, l.owner, l.token
        """
            .formatted(table, NOW);
  }

  @Override
  String dialect() {
    return PostgresDialect.NAME;
  }

  @Override
  String nowMillis() {
    return NOW;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/postgresql.sql";
  }

  @Override
  String probeColumns() {
    return super.probeColumns() + ", waiters";
  }

  @Override
  String probeSequence() {
    // Draws one value, as acquisition does, so the same privilege is checked (a gap is harmless).
    return "SELECT nextval('" + table + "_fence')";
  }

  @Override
  void forcedRelease(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, "SELECT pg_notify(?, ?)")) {
      ps.setString(1, channel);
      ps.setString(2, name);
      ps.execute();
    }
  }

  /**
   * The transaction lock that orders the acquisitions of one name: two integers, a space of its own
   * (session mode's advisory locks take one bigint), the table's hash and the name's.
   */
  int[] orderKey(String name) {
    return new int[] {tableKey, firstInt(SessionLockStatements.sha256(name))};
  }

  private static int firstInt(byte[] hash) {
    return ((hash[0] & 0xff) << 24)
        | ((hash[1] & 0xff) << 16)
        | ((hash[2] & 0xff) << 8)
        | (hash[3] & 0xff);
  }

  @Override
  AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    int[] key = orderKey(name);
    try (PreparedStatement ps = prepare(c, acquire)) {
      ps.setInt(1, key[0]);
      ps.setInt(2, key[1]);
      ps.setString(3, name);
      ps.setString(4, owner);
      ps.setLong(5, leaseMillis);
      ps.setString(6, holder);
      ps.setInt(7, countsHolds ? 1 : 0); // an owner id re-enters, a grant owner repeats
      ps.setString(8, owner); // granted: the row is this owner's after the statement
      ps.setString(9, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          // The holder's row was deleted between the two halves: free now, try again at once.
          return new AcquireResult.Held(Duration.ZERO);
        }
        if (rs.getBoolean(1)) {
          return new AcquireResult.Granted(rs.getLong(2), rs.getInt(3));
        }
        return new AcquireResult.Held(Duration.ofMillis(Math.max(0, rs.getLong(4))));
      }
    }
  }

  @Override
  ReleaseResult release(Connection c, String name, String owner, long token) throws SQLException {
    // Two releases of one owner id at once: the DELETE and UPDATE of the statement see one
    // snapshot, so the loser can match neither row version. Try again while the grant is ours.
    for (int round = 0; round < 3; round++) {
      ReleaseResult result = releaseOnce(c, name, owner, token);
      if (result != ReleaseResult.NOT_HELD || !ownsValid(c, name, owner, token)) {
        return result;
      }
    }
    return ReleaseResult.NOT_HELD;
  }

  private ReleaseResult releaseOnce(Connection c, String name, String owner, long token)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, release)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, token);
      ps.setString(4, name);
      ps.setString(5, owner);
      ps.setLong(6, token);
      ps.setString(7, channel);
      ps.setString(8, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return ReleaseResult.NOT_HELD;
        }
        return rs.getInt(1) == 0 ? ReleaseResult.RELEASED : ReleaseResult.STILL_HELD;
      }
    }
  }

  @Override
  Set<Integer> renew(Connection c, List<HeldLease> leases) throws SQLException {
    String[] names = new String[leases.size()];
    String[] owners = new String[leases.size()];
    Long[] tokens = new Long[leases.size()];
    Long[] millis = new Long[leases.size()];
    Boolean[] shared = new Boolean[leases.size()];
    for (int i = 0; i < leases.size(); i++) {
      names[i] = leases.get(i).lockName();
      owners[i] = leases.get(i).owner().key();
      tokens[i] = leases.get(i).fencingToken();
      millis[i] = leases.get(i).lease().toMillis();
      shared[i] = leases.get(i).owner().countsHolds(); // see LockStatements#renew
    }
    Set<String> renewed = new HashSet<>();
    Array a1 = c.createArrayOf("varchar", names);
    Array a2 = c.createArrayOf("varchar", owners);
    Array a3 = c.createArrayOf("bigint", tokens);
    Array a4 = c.createArrayOf("bigint", millis);
    Array a5 = c.createArrayOf("boolean", shared);
    try (PreparedStatement ps = prepare(c, renew)) {
      ps.setArray(1, a1);
      ps.setArray(2, a2);
      ps.setArray(3, a3);
      ps.setArray(4, a4);
      ps.setArray(5, a5);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          renewed.add(grantKey(rs.getString(1), rs.getString(2), rs.getLong(3)));
        }
      }
    } finally {
      a1.free();
      a2.free();
      a3.free();
      a4.free();
      a5.free();
    }
    Set<Integer> gone = new HashSet<>();
    for (int i = 0; i < leases.size(); i++) {
      if (!renewed.contains(grantKey(names[i], owners[i], tokens[i]))) {
        gone.add(i);
      }
    }
    return gone;
  }

  private static String grantKey(String name, String owner, long token) {
    return name + '\u0000' + owner + '\u0000' + token;
  }
}
