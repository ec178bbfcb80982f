package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
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
