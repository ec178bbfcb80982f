package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An acquirer that goes silent inside its transaction (its process freezes, its network is cut)
 * holds the semaphore's counter row, and the grants' row locks, for as long as the server keeps its
 * session: without a bound, hours (until TCP keepalive), in which every other acquisition of the
 * semaphore, and every renewal of its grants, fails at its statement timeout. Found by review. The
 * acquisition bounds its transaction's idle time on the server to half the statement timeout, so
 * the next acquirer, waiting at most the statement timeout, gets through.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PermitSilentAcquirerTest {
  private static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration LONG = Duration.ofSeconds(30);

  @Test
  void postgresAcquirerSilentBeforeItsCommitDoesNotBlockTheSemaphore() throws Exception {
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.postgres()).withStatementTimeout(STATEMENT_TIMEOUT);
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
      PermitStore store = backend.permits().orElseThrow();
      PermitAcquisition silent =
          new PermitAcquisition(
              new PostgresPermitStatements(settings.table(), STATEMENT_TIMEOUT), System::nanoTime);
      String s = "silent-acquirer-" + UUID.randomUUID();
      CountDownLatch commitReached = new CountDownLatch(1);
      CountDownLatch wakeUp = new CountDownLatch(1);
      try (Connection real = backend.dataSource().getConnection()) {
        Connection frozenAtCommit = frozenAtCommit(real, commitReached, wakeUp);
        CompletableFuture<AcquireResult> first =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return silent.acquire(
                        frozenAtCommit, s, 1, 1, "t:silent", "silent", 30_000, System.nanoTime());
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
        try {
          assertThat(commitReached.await(10, TimeUnit.SECONDS)).isTrue();
          // The counter row is locked by a session that says nothing more.
          AcquireResult second =
              store
                  .tryAcquire(s, 1, 1, LockOwner.ofGrant(UUID.randomUUID().toString()), LONG)
                  .get(20, TimeUnit.SECONDS);
          assertThat(second)
              .as("the next acquirer, once the server ended the silent transaction")
              .isInstanceOf(AcquireResult.Granted.class);
        } finally {
          wakeUp.countDown();
          first.handle((r, e) -> null).get(20, TimeUnit.SECONDS);
        }
      }
    }
  }

  /** {@code real}, whose commit waits for {@code wakeUp} before it is sent. */
  private static Connection frozenAtCommit(
      Connection real, CountDownLatch commitReached, CountDownLatch wakeUp) {
    java.util.concurrent.atomic.AtomicBoolean rolledBack =
        new java.util.concurrent.atomic.AtomicBoolean();
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              // The commit: itself, or the return to autocommit within a transaction that was not
              // rolled back (the first round, which finds no counter row, rolls back and returns).
              if (method.getName().equals("rollback")) {
                rolledBack.set(true);
              } else if (method.getName().equals("setAutoCommit") && !(Boolean) args[0]) {
                rolledBack.set(false);
              }
              if (method.getName().equals("commit")
                  || method.getName().equals("setAutoCommit")
                      && (Boolean) args[0]
                      && !real.getAutoCommit()
                      && !rolledBack.get()) {
                commitReached.countDown();
                wakeUp.await();
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
