package io.dlock.examples.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The articles' lock table ({@link FlawedLockTable}) next to dlock's lease rows ({@link
 * LeaseRowLockTable}), one flaw per pair of tests: the flawed version shows the failure happening,
 * the right one the same scenario without it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LockTableTest {
  private static String url;
  private static DataSource dataSource;
  private static FlawedLockTable flawed;
  private static FencedStock stock;
  private static ExecutorService threads;

  @BeforeAll
  static void createTables() throws Exception {
    url = ExampleDatabase.url();
    dataSource = ExampleDatabase.dataSource();
    flawed = new FlawedLockTable(dataSource, Duration.ofMillis(50));
    flawed.createIfMissing();
    stock = new FencedStock(dataSource);
    stock.createIfMissing();
    threads = Executors.newCachedThreadPool(ExampleDatabase::daemon);
  }

  @AfterAll
  static void stopThreads() {
    if (threads != null) {
      threads.shutdownNow();
    }
  }

  // --- A crashed holder ---------------------------------------------------------------------

  @Test
  void flawedCrashedHolderBlocksTheLockForEverAndTheInsertLoopWaitsWithIt() throws Exception {
    String name = ExampleDatabase.unique("crash");
    try (CrashingHolder.Running holder = CrashingHolder.start("flawed", url, name)) {
      holder.crash(); // SIGKILL while holding: its row stays, nothing will ever delete it
    }
    Future<?> waiter =
        threads.submit(
            () -> {
              flawed.lock(name); // the articles' "while until the insert wins"
              return null;
            });
    // Three times the lease after which the right version lets the next holder in: still waiting.
    await()
        .during(CrashingHolder.LEASE.multipliedBy(3))
        .atMost(CrashingHolder.LEASE.multipliedBy(5))
        .until(() -> !waiter.isDone());
    assertThat(flawed.tryLock(name)).as("the dead holder's row still locks").isFalse();
    waiter.cancel(true); // no bound, no deadline: only an interrupt ends the wait
    flawed.unlock(name);
  }

  @Test
  void leaseRowsLetTheNextHolderInOnceACrashedHoldersLeaseRunsOut() throws Exception {
    String name = ExampleDatabase.unique("crash");
    try (LockClient locks = LeaseRowLockTable.newClient(url);
        CrashingHolder.Running holder = CrashingHolder.start("lease-row", url, name)) {
      // While the holder lives its client renews the 1 s lease: the lock stays held past it.
      await()
          .during(CrashingHolder.LEASE.multipliedBy(2))
          .atMost(CrashingHolder.LEASE.multipliedBy(4))
          .until(() -> isHeldByAnother(locks, name));
      // Waiting is bounded: a waiter gives up after its wait, with a typed exception.
      assertThatThrownBy(() -> locks.lock(name).acquire(Duration.ofMillis(200)))
          .isInstanceOf(LockTimeoutException.class);

      holder.crash();
      long crashedAt = System.nanoTime();
      try (Lease next = locks.lock(name).acquire(Duration.ofSeconds(10))) {
        Duration waited = Duration.ofNanos(System.nanoTime() - crashedAt);
        assertThat(waited).isLessThan(CrashingHolder.LEASE.plusSeconds(3));
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
      }
    }
  }

  // --- Unlock without an owner check -------------------------------------------------------

  @Test
  void flawedUnlockOfACallerWhoFailedToLockReleasesTheHoldersLock() throws Exception {
    String name = ExampleDatabase.unique("owner");
    assertThat(flawed.tryLock(name)).as("A holds").isTrue();

    // B, the usual shape: try to lock, and unlock in finally whether or not the lock was had.
    boolean bLocked = false;
    try {
      bLocked = flawed.tryLock(name);
    } finally {
      flawed.unlock(name); // deletes A's row: nothing says whose it is
    }
    assertThat(bLocked).isFalse();

    assertThat(flawed.tryLock(name)).as("C gets in while A still holds").isTrue();
    flawed.unlock(name);
  }

  @Test
  void leaseRowsReleaseOnlyTheCallersOwnGrant() throws Exception {
    String name = ExampleDatabase.unique("owner");
    try (LockClient a = LeaseRowLockTable.newClient(url);
        LockClient others = LeaseRowLockTable.newClient(url)) {
      try (Lease held = a.lock(name).acquire(Duration.ofSeconds(5))) {
        // B, the same shape, through dlock's java.util.concurrent.locks.Lock view.
        Lock b = others.lock(name).asLock();
        assertThatThrownBy(
                () -> {
                  boolean locked = b.tryLock();
                  try {
                    assertThat(locked).isFalse();
                  } finally {
                    b.unlock(); // B holds nothing: refused, A's row is untouched
                  }
                })
            .isInstanceOf(IllegalMonitorStateException.class);

        assertThat(others.lock(name).tryAcquire()).as("C stays out while A holds").isEmpty();
        assertThat(held.isValid()).isTrue();
        assertThat(held.release()).isTrue();
      }
      Optional<Lease> c = others.lock(name).tryAcquire();
      assertThat(c).as("C gets in once A released").isPresent();
      c.get().release();
    }
  }

  // --- The cleanup job, a late holder and its stale write ----------------------------------

  @Test
  void flawedCleanupJobHandsALiveHoldersLockOnAndTheLateHolderOverwritesAndUnlocks()
      throws Exception {
    String name = ExampleDatabase.unique("cleanup");
    String sku = ExampleDatabase.unique("sku");
    stock.put(sku, 4);

    assertThat(flawed.tryLock(name)).as("A holds").isTrue();
    long readByA = stock.stock(sku); // 4; A wants 3, then pauses (GC, a slow payment call)

    // The articles' cleanup job: A's row is older than its timeout, and is deleted.
    assertThat(flawed.purgeOlderThan(Duration.ZERO)).isPositive();

    assertThat(flawed.tryLock(name)).as("B gets the lock A still believes it holds").isTrue();
    long readByB = stock.stock(sku); // 4; B wants 2
    stock.writeUnfenced(sku, readByB - 2);

    stock.writeUnfenced(sku, readByA - 3); // A wakes up and writes: nothing can refuse it
    flawed.unlock(name); // and A's unlock deletes B's row

    assertThat(stock.stock(sku)).as("B's sale is lost: 5 sold of 4, stock says 1").isEqualTo(1);
    assertThat(flawed.tryLock(name)).as("C gets in while B still holds").isTrue();
    flawed.unlock(name);
  }

  @Test
  void leaseRowsRefuseTheLateHoldersReleaseAndTheFencedStockItsWrite() throws Exception {
    String name = ExampleDatabase.unique("late");
    String sku = ExampleDatabase.unique("sku");
    stock.put(sku, 4);
    try (LockClient a = LeaseRowLockTable.newClient(url);
        LockClient b = LeaseRowLockTable.newClient(url)) {
      Lease first =
          a.lock(name, LockOptions.defaults().withFixedLease(Duration.ofSeconds(1)))
              .acquire(Duration.ofSeconds(5));
      long readByA = stock.stock(sku); // 4; A wants 3, then pauses past its lease
      await().atMost(Duration.ofSeconds(5)).until(() -> !first.isValid());

      try (Lease second = b.lock(name).acquire(Duration.ofSeconds(10))) {
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        long readByB = stock.stock(sku); // 4; B wants 2
        assertThat(stock.write(sku, readByB - 2, second.fencingToken())).isTrue();

        assertThat(stock.write(sku, readByA - 3, first.fencingToken()))
            .as("A's late write is refused: B wrote with a higher token")
            .isFalse();
        assertThat(first.release()).as("A's late release leaves B's grant alone").isFalse();

        assertThat(a.lock(name).tryAcquire()).as("C stays out while B holds").isEmpty();
        assertThat(second.isValid()).isTrue();
        assertThat(stock.stock(sku)).as("only B's sale counted: 2 sold of 4").isEqualTo(2);
      }
    }
  }

  private static boolean isHeldByAnother(LockClient locks, String name) {
    Optional<Lease> lease = locks.lock(name).tryAcquire();
    lease.ifPresent(Lease::release);
    return lease.isEmpty();
  }
}
