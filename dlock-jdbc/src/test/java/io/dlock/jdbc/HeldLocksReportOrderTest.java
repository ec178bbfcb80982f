package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The record of a grant whose session died is cleared only after its holds were told, by the thread
 * that told them. Here a re-entry of the same owner finds the grant dead and takes the report on
 * itself (it sends it once its own request is answered), and stalls opening its next connection;
 * meanwhile a renewal finds the grant dead too. Before the fix, the renewal cleared the record
 * though nobody had told the holds yet: another client could then be granted while they read valid
 * (found by review).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeldLocksReportOrderTest {
  private static final String URL = TestDatabases.H2_URL;

  @Test
  void aRenewalLeavesTheRecordToTheThreadThatTellsTheHolds() throws Exception {
    // The client creates the tables; the test drives HeldLocks itself.
    try (LockClient schema =
        JdbcLocks.newClient(
            TestDatabases.settings(URL, JdbcLockMode.ROW), LockClientOptions.defaults())) {
      schema.lock("schema-" + UUID.randomUUID()).tryAcquire().orElseThrow().release();
    }
    CountDownLatch reentryOpening = new CountDownLatch(1);
    CountDownLatch letReentryGo = new CountDownLatch(1);
    List<String> told = new CopyOnWriteArrayList<>();
    String reentryThread = "reentry-" + UUID.randomUUID();
    HeldLocks.Connections connections =
        new HeldLocks.Connections() {
          @Override
          public Connection open() throws SQLException {
            if (Thread.currentThread().getName().equals(reentryThread)) {
              reentryOpening.countDown();
              try {
                letReentryGo.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return DriverManager.getConnection(URL);
          }

          @Override
          public void discard(Connection c) {
            try {
              c.close();
            } catch (SQLException e) {
              // gone already
            }
          }

          @Override
          public boolean reachable() {
            try (Connection c = DriverManager.getConnection(URL)) {
              return c.isValid(1);
            } catch (SQLException e) {
              return false;
            }
          }
        };
    RowLockStatements statements =
        new H2RowLockStatements(TestDatabases.TABLE, Duration.ofSeconds(5));
    try (HeldLocks held =
        new HeldLocks(
            statements, connections, Duration.ofSeconds(6), 4, Duration.ofMinutes(1), "test")) {
      held.bindEvents(
          new BackendEvents() {
            @Override
            public void leaseLost(String lockName, String owner, String detail) {
              told.add(lockName);
            }

            @Override
            public void connectionSuspended(String detail) {}

            @Override
            public void connectionRestored() {}

            @Override
            public void sessionLost(String detail) {}
          });
      String name = "report-order-" + UUID.randomUUID();
      LockOwner owner = LockOwner.ofOwnerId("x");
      AcquireResult granted = held.tryAcquire(name, owner.key(), true, 10_000, "test", held.now());
      assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
      long token = ((AcquireResult.Granted) granted).fencingToken();
      try (Connection admin = DriverManager.getConnection(URL)) {
        statements.endSession(admin, name, HeldSessions.idOf(URL, name));
      }

      CompletableFuture<AcquireResult> reentry = new CompletableFuture<>();
      Thread t =
          new Thread(
              () -> {
                try {
                  reentry.complete(
                      held.tryAcquire(name, owner.key(), true, 10_000, "test", held.now()));
                } catch (Throwable e) {
                  reentry.completeExceptionally(e);
                }
              },
              reentryThread);
      t.start();
      assertThat(reentryOpening.await(10, TimeUnit.SECONDS)).isTrue();

      held.renew(List.of(new HeldLease(name, owner, token, Duration.ofSeconds(10))));
      assertThat(told).as("nobody told the holds yet").isEmpty();
      try (Connection c = DriverManager.getConnection(URL)) {
        assertThat(statements.recordHeld(c, name, token))
            .as("the record still holds the lock for the untold holds")
            .isTrue();
      }

      letReentryGo.countDown();
      reentry.get(10, TimeUnit.SECONDS);
      assertThat(told).containsExactly(name);
      try (Connection c = DriverManager.getConnection(URL)) {
        assertThat(statements.recordHeld(c, name, token))
            .as("cleared by the thread that told the holds")
            .isFalse();
      }
    }
  }
}
