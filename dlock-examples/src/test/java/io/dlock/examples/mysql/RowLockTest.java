package io.dlock.examples.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The articles' {@code SELECT ... FOR UPDATE} locks ({@link FlawedRowLock}, {@link
 * FlawedEmptyResultRowLock}, {@link FlawedAutocommitRowLock}) next to dlock's row mode ({@link
 * ForUpdateRowLock}). Interleavings are forced with second connections: what one transaction holds
 * is asked of the database from another ({@code FOR UPDATE NOWAIT}), never guessed from timing.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RowLockTest {
  private static final Duration PAUSE = Duration.ofMillis(50);
  private static final String DLOCK_ROWS = ForUpdateRowLock.TABLE + "_rows";

  private static String url;
  private static DataSource dataSource;
  private static ExecutorService threads;

  @BeforeAll
  static void createTables() throws Exception {
    url = ExampleDatabase.url();
    dataSource = ExampleDatabase.dataSource();
    FlawedRowLock.createIfMissing(dataSource);
    FlawedEmptyResultRowLock.createIfMissing(dataSource);
    threads = Executors.newCachedThreadPool(ExampleDatabase::daemon);
  }

  @AfterAll
  static void stopThreads() {
    if (threads != null) {
      threads.shutdownNow();
    }
  }

  // --- The lock ends with the statement (autocommit) ----------------------------------------

  @Test
  void flawedForUpdateInAutocommitHoldsNothingAndLetsEveryoneIn() throws Exception {
    String name = ExampleDatabase.unique("autocommit");
    FlawedRowLock.addLockRow(dataSource, name);
    FlawedAutocommitRowLock a = new FlawedAutocommitRowLock(dataSource);
    FlawedAutocommitRowLock b = new FlawedAutocommitRowLock(dataSource);

    assertThat(a.lock(name)).as("A is told it holds the lock").isTrue();
    // Had A's lock lasted, B's FOR UPDATE would wait here (bounded by the future's timeout).
    Future<Boolean> bLocks = threads.submit(() -> b.lock(name));
    assertThat(bLocks.get(20, TimeUnit.SECONDS)).as("so is B, at the same time").isTrue();
    assertThat(ExampleDatabase.rowIsFree(FlawedRowLock.TABLE, "lock_name", name))
        .as("and nobody holds the row")
        .isTrue();
  }

  @Test
  void rowModeKeepsTheRowLockedFromGrantToRelease() throws Exception {
    String name = ExampleDatabase.unique("autocommit");
    try (LockClient a = ForUpdateRowLock.newClient(url);
        LockClient b = ForUpdateRowLock.newClient(url)) {
      Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
      assertThat(ExampleDatabase.rowIsFree(DLOCK_ROWS, "name", name))
          .as("the row is locked while A holds")
          .isFalse();
      assertThat(b.lock(name).tryAcquire()).as("B stays out").isEmpty();

      assertThat(held.release()).isTrue();
      assertThat(ExampleDatabase.rowIsFree(DLOCK_ROWS, "name", name)).isTrue();
      Optional<Lease> next = b.lock(name).tryAcquire();
      assertThat(next).as("B gets in once A released").isPresent();
      next.get().release();
    }
  }

  // --- The lock belongs to a shared connection ---------------------------------------------

  @Test
  void flawedSharedConnectionLetsASecondThreadInAndTheFirstReleaseFreesIt() throws Exception {
    String name = ExampleDatabase.unique("shared");
    FlawedRowLock.addLockRow(dataSource, name);
    try (Connection connection = ExampleDatabase.connect();
        Thread1And2 threadsOf = new Thread1And2()) {
      FlawedRowLock lock = new FlawedRowLock(connection, PAUSE); // one lock object, as in a bean
      threadsOf.one(() -> call(() -> lock.lock(name)));
      assertThat(ExampleDatabase.rowIsFree(FlawedRowLock.TABLE, "lock_name", name)).isFalse();

      // Thread 2 on the same lock object: its FOR UPDATE runs in the transaction that holds the
      // row, so it returns at once. Had it been excluded, it would wait, and the call time out.
      threadsOf.two(() -> call(() -> lock.lock(name)));

      // Thread 1 is done and releases: the commit frees the row while thread 2 still works.
      threadsOf.one(() -> call(lock::release));
      assertThat(ExampleDatabase.rowIsFree(FlawedRowLock.TABLE, "lock_name", name))
          .as("another process can lock the row while thread 2 believes it holds it")
          .isTrue();
    }
  }

  @Test
  void rowModeRefusesASecondThreadOfTheSameClient() throws Exception {
    String name = ExampleDatabase.unique("shared");
    try (LockClient locks = ForUpdateRowLock.newClient(url);
        Thread1And2 threadsOf = new Thread1And2()) {
      Lease first = threadsOf.one(() -> locks.lock(name).acquire(Duration.ofSeconds(5)));
      Optional<Lease> second = threadsOf.two(() -> locks.lock(name).tryAcquire());
      assertThat(second).as("thread 2 is refused while thread 1 holds").isEmpty();
      assertThat(threadsOf.one(first::release)).isTrue();
      Optional<Lease> after = threadsOf.two(() -> locks.lock(name).tryAcquire());
      assertThat(after).as("thread 2 gets in once thread 1 released").isPresent();
      threadsOf.two(after.get()::release);
    }
  }

  // --- An empty result taken for the lock --------------------------------------------------

  @Test
  void flawedEmptyResultIsTakenForTheLockByEveryClientAtOnce() throws Exception {
    String trackingId = ExampleDatabase.unique("order"); // no order with this id exists yet
    try (Connection c1 = boundedLockWaits(ExampleDatabase.connect());
        Connection c2 = boundedLockWaits(ExampleDatabase.connect())) {
      FlawedEmptyResultRowLock a = new FlawedEmptyResultRowLock(c1, PAUSE);
      FlawedEmptyResultRowLock b = new FlawedEmptyResultRowLock(c2, PAUSE);
      assertThat(threads.submit(() -> a.lock(trackingId)).get(20, TimeUnit.SECONDS))
          .as("A is told it holds the lock")
          .isTrue();
      // A's transaction is still open. Had it locked anything B's select would wait (and, with
      // every error swallowed, loop on) until the get times out.
      assertThat(threads.submit(() -> b.lock(trackingId)).get(20, TimeUnit.SECONDS))
          .as("so is B, while A holds")
          .isTrue();
      a.release();
      b.release();
    }
  }

  @Test
  void rowModeLocksARowThatExistsAndGrantsOneClient() throws Exception {
    String name = ExampleDatabase.unique("order"); // never used before either
    try (LockClient a = ForUpdateRowLock.newClient(url);
        LockClient b = ForUpdateRowLock.newClient(url)) {
      Optional<Lease> first = a.lock(name).tryAcquire();
      assertThat(first).isPresent();
      assertThat(b.lock(name).tryAcquire()).as("B stays out while A holds").isEmpty();
      assertThat(ExampleDatabase.rowIsFree(DLOCK_ROWS, "name", name))
          .as("a real row, really locked")
          .isFalse();
      first.get().release();
    }
  }

  // --- No bound on the wait ----------------------------------------------------------------

  @Test
  void flawedLoopNeverEndsOnceTheRowExists() throws Exception {
    String trackingId = ExampleDatabase.unique("order");
    FlawedEmptyResultRowLock.addOrder(dataSource, trackingId); // the order is in: nobody locks
    try (Connection c = boundedLockWaits(ExampleDatabase.connect())) {
      FlawedEmptyResultRowLock lock = new FlawedEmptyResultRowLock(c, PAUSE);
      Future<Boolean> locking = threads.submit(() -> lock.lock(trackingId));
      // Nobody else holds anything, yet the call does not return, however long it is given.
      await()
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(5))
          .until(() -> !locking.isDone());
      assertThat(
              ExampleDatabase.rowIsFree(FlawedEmptyResultRowLock.TABLE, "tracking_id", trackingId))
          .as("and the looping caller holds the row it selected, blocking everyone else")
          .isFalse();
      locking.cancel(true); // only an interrupt ends it
    }
  }

  @Test
  void rowModeWaitsAtMostTheGivenTime() throws Exception {
    String name = ExampleDatabase.unique("bound");
    try (LockClient a = ForUpdateRowLock.newClient(url);
        LockClient b = ForUpdateRowLock.newClient(url)) {
      Lease held = a.lock(name).acquire(Duration.ofSeconds(5));
      long start = System.nanoTime();
      assertThatThrownBy(() -> b.lock(name).acquire(Duration.ofMillis(300)))
          .isInstanceOf(LockTimeoutException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
      held.release();
    }
  }

  /** Lock waits of this connection end after 1 s (error 1205) instead of MariaDB's 50 s. */
  private static Connection boundedLockWaits(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SET SESSION innodb_lock_wait_timeout = 1");
    }
    return c;
  }

  /** Two distinct, long-lived threads (a pool could run both calls on one thread). */
  private static final class Thread1And2 implements AutoCloseable {
    private final ExecutorService one = Executors.newSingleThreadExecutor(ExampleDatabase::daemon);
    private final ExecutorService two = Executors.newSingleThreadExecutor(ExampleDatabase::daemon);

    <T> T one(Callable<T> call) throws Exception {
      return one.submit(call).get(20, TimeUnit.SECONDS);
    }

    <T> T two(Callable<T> call) throws Exception {
      return two.submit(call).get(20, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
      one.shutdownNow();
      two.shutdownNow();
    }
  }

  private interface SqlAction {
    void run() throws Exception;
  }

  private static Void call(SqlAction action) throws Exception {
    action.run();
    return null;
  }
}
