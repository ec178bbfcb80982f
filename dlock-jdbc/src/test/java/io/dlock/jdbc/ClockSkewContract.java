package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two clients whose clocks are hours apart, and whose database sessions run in time zones 26 hours
 * apart, share a lock: neither sees the other's lease end early or last longer, because expiry is
 * judged only by the database's clock. The clients' monotonic clocks are injected with offsets of
 * plus and minus five hours; their sessions' time zones are set through the JDBC URL.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class ClockSkewContract {
  private static final long HOURS_5 = TimeUnit.HOURS.toNanos(5);
  private final List<LockClient> clients = new ArrayList<>();

  /** The URL of the database, its session set to the time zone {@code zone} (an offset). */
  protected abstract String url(String zone);

  @AfterEach
  void close() {
    clients.forEach(LockClient::close);
  }

  private LockClient client(String zone, long offsetNanos) {
    MonotonicClock skewed = () -> System.nanoTime() + offsetNanos;
    LockClient client =
        JdbcLocks.newClient(
            TestDatabases.settings(url(zone)),
            LockClientOptions.defaults()
                .withOperationTimeout(Duration.ofSeconds(2))
                .withClock(skewed));
    clients.add(client);
    return client;
  }

  @Test
  void aSkewedClientNeitherEndsNorStretchesAnotherClientsLease() throws SQLException {
    LockClient ahead = client("+14:00", HOURS_5);
    LockClient behind = client("-12:00", -HOURS_5);
    String name = "skew-fixed-" + UUID.randomUUID();
    Duration lease = Duration.ofMillis(1500);

    long start = System.nanoTime();
    Lease held =
        ahead.lock(name, LockOptions.defaults().withFixedLease(lease)).tryAcquire().orElseThrow();
    long remainingOnServer = remainingOnServer(name);
    assertThat(remainingOnServer)
        .as("expiry set by the database clock, not by a client clock hours off")
        .isBetween(0L, lease.toMillis());

    // Not ended early: for most of the lease the other client finds the lock held.
    await()
        .during(Duration.ofMillis(lease.toMillis() / 2))
        .atMost(millis(5000))
        .until(() -> behind.lock(name).tryAcquire().isEmpty());

    // Not stretched: the other client gets it once the lease is over, not hours later.
    Lease next = behind.lock(name).acquire(millis(5000));
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(took)
        .isGreaterThanOrEqualTo(lease.minusMillis(20))
        .isLessThan(lease.plus(millis(1500)));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(held.release()).isFalse();
    next.release();
  }

  @Test
  void aSkewedHolderKeepsItsRenewedLeaseAndOthersWaitForIt() {
    LockClient behind = client("-12:00", -HOURS_5);
    LockClient ahead = client("+14:00", HOURS_5);
    String name = "skew-renewed-" + UUID.randomUUID();
    AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
    Lease held =
        behind
            .lock(name, LockOptions.defaults().withRenewedLease(Duration.ofMillis(600)))
            .tryAcquire()
            .orElseThrow();
    held.onLost(lost::set);
    await()
        .during(Duration.ofMillis(2400))
        .atMost(millis(8000))
        .until(() -> ahead.lock(name).tryAcquire().isEmpty() && held.isValid());
    assertThat(lost.get()).isNull();
    assertThat(held.release()).isTrue();
    assertThat(ahead.lock(name).tryAcquire().map(Lease::release)).contains(true);
  }

  private long remainingOnServer(String name) throws SQLException {
    JdbcLockBackend backend = JdbcLockBackend.connect(TestDatabases.settings(url("+00:00")));
    try {
      LockStatements statements = statementsOf(backend);
      try (Connection c = dataSource(backend).getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "SELECT expires_at - "
                      + statements.nowMillis()
                      + " FROM "
                      + TestDatabases.TABLE
                      + " WHERE name = ?")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          return rs.getLong(1);
        }
      }
    } finally {
      backend.close();
    }
  }

  private static LockStatements statementsOf(JdbcLockBackend backend) {
    return backend.statements();
  }

  private static javax.sql.DataSource dataSource(JdbcLockBackend backend) {
    return backend.dataSource();
  }
}
