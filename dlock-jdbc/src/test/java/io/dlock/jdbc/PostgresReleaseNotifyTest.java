package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A lease-row release sends {@code NOTIFY} only when an acquisition found the lock held during the
 * grant: PostgreSQL serializes the commits of notifying transactions, so uncontended releases must
 * not notify. What a release sent is read on a listening connection up to a marker notification
 * sent after it (notifications arrive in commit order), so that "none" is decided without a sleep.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostgresReleaseNotifyTest {
  private final String url = TestDatabases.postgres();
  private final String channel = PostgresDialect.channel(TestDatabases.TABLE);
  private Connection listening;
  private LockClient holder;
  private LockClient other;

  @BeforeEach
  void listen() throws SQLException {
    holder = JdbcLocks.newClient(TestDatabases.settings(url), LockClientOptions.defaults());
    other = JdbcLocks.newClient(TestDatabases.settings(url), LockClientOptions.defaults());
    listening = DriverManager.getConnection(url);
    try (Statement st = listening.createStatement()) {
      st.execute("LISTEN " + channel);
    }
  }

  @AfterEach
  void close() throws SQLException {
    holder.close();
    other.close();
    listening.close();
  }

  @Test
  void anUncontendedReleaseSendsNoNotify() throws Exception {
    String name = "notify-none-" + UUID.randomUUID();
    holder.lock(name).tryAcquire().orElseThrow().release();
    assertThat(notifiedUpToMarker()).doesNotContain(name);
  }

  @Test
  void aReleaseAfterAFailedAttemptNotifiesOnceAndTheNextGrantStartsUnflagged() throws Exception {
    String name = "notify-flag-" + UUID.randomUUID();
    Lease held = holder.lock(name).tryAcquire().orElseThrow();
    assertThat(other.lock(name).tryAcquire()).isEmpty(); // found it held: flags the grant
    assertThat(other.lock(name).tryAcquire()).isEmpty(); // a second attempt writes nothing new
    held.release();
    assertThat(notifiedUpToMarker()).containsOnlyOnce(name);

    // The next grant of the name starts with no waiters: its release is silent again.
    holder.lock(name).tryAcquire().orElseThrow().release();
    assertThat(notifiedUpToMarker()).doesNotContain(name);
  }

  @Test
  void aReentryKeepsTheFlagOfItsGrant() throws Exception {
    String name = "notify-reentry-" + UUID.randomUUID();
    io.dlock.LockOptions shared = io.dlock.LockOptions.defaults().withOwnerId("owner-" + name);
    Lease first = holder.lock(name, shared).tryAcquire().orElseThrow();
    assertThat(other.lock(name).tryAcquire()).isEmpty();
    Lease second = holder.lock(name, shared).tryAcquire().orElseThrow(); // re-entry on the server
    second.release();
    first.release();
    assertThat(notifiedUpToMarker()).containsOnlyOnce(name);
  }

  /**
   * A waiter whose statement began before the holder's release, and waited on the name's
   * transaction lock while the row was released and granted anew, must flag the new grant: its
   * snapshot still shows the old row, so only the row version that ON CONFLICT locks can take the
   * flag (found in review; with a separate UPDATE the new holder's release woke nobody).
   */
  @Test
  void aWaiterBlockedAcrossAReleaseAndANewGrantFlagsTheNewGrant() throws Exception {
    String name = "notify-regrant-" + UUID.randomUUID();
    String table = TestDatabases.TABLE;
    Lease first = holder.lock(name).tryAcquire().orElseThrow();
    int[] order = new PostgresLeaseRowStatements(table, Duration.ofSeconds(5)).orderKey(name);
    try (Connection next = DriverManager.getConnection(url);
        Connection watch = DriverManager.getConnection(url)) {
      next.setAutoCommit(false);
      try (PreparedStatement lock = next.prepareStatement("SELECT pg_advisory_xact_lock(?, ?)")) {
        lock.setInt(1, order[0]);
        lock.setInt(2, order[1]);
        lock.execute(); // the next grant's statement holds the name's transaction lock
      }
      CompletableFuture<Optional<Lease>> waiting =
          CompletableFuture.supplyAsync(() -> other.lock(name).tryAcquire());
      // The waiter's statement has begun (its snapshot shows the first grant) and waits, on this
      // name's transaction lock (not on a lock of another test running on the server meanwhile).
      String waitsForTheName =
          "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'"
              + " AND objsubid = 2 AND classid::int8 = "
              + Integer.toUnsignedLong(order[0])
              + " AND objid::int8 = "
              + Integer.toUnsignedLong(order[1]);
      await().atMost(Duration.ofSeconds(10)).until(() -> count(watch, waitsForTheName) > 0);
      first.release(); // not flagged yet: no NOTIFY
      try (PreparedStatement insert =
          next.prepareStatement(
              "INSERT INTO "
                  + table
                  + " (name, owner, holds, token, expires_at, holder, granted_at, waiters)"
                  + " VALUES (?, 't:next', 1, nextval('"
                  + table
                  + "_fence'), "
                  + PostgresDialect.NOW_MILLIS
                  + " + 30000, 'next', "
                  + PostgresDialect.NOW_MILLIS
                  + ", FALSE)")) {
        insert.setString(1, name);
        insert.executeUpdate();
      }
      next.commit(); // the new grant, and the transaction lock let go
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isEmpty();
      try (PreparedStatement flag =
          watch.prepareStatement("SELECT owner, waiters FROM " + table + " WHERE name = ?")) {
        flag.setString(1, name);
        try (ResultSet rs = flag.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).isEqualTo("t:next");
          assertThat(rs.getBoolean(2)).as("the new grant is flagged").isTrue();
        }
      }
    }
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The payloads notified on the table's channel before a marker sent now. */
  private List<String> notifiedUpToMarker() throws SQLException {
    String marker = "marker-" + UUID.randomUUID();
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
      ps.setString(1, channel);
      ps.setString(2, marker);
      ps.execute();
    }
    List<String> payloads = new ArrayList<>();
    PGConnection pg = listening.unwrap(PGConnection.class);
    while (true) {
      PGNotification[] batch = pg.getNotifications(10_000);
      if (batch == null) {
        continue; // the test's timeout bounds the wait
      }
      for (PGNotification n : batch) {
        if (n.getParameter().equals(marker)) {
          return payloads;
        }
        payloads.add(n.getParameter());
      }
    }
  }
}
